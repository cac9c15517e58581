import { Nullable, Type, Uuid } from '../../http/schema.ts';
import { ValidationError } from '../../lib/errors.ts';
import { onStationChanged } from '../stations/changes.ts';
import { BundleMediaKey, registerStationSetting } from '../stations/settings.ts';
import { stationImageVersion } from '../media/images.ts';
import { ARTWORK_DEFAULTS, MIN_SIZE_RANGE, type ArtworkSetting } from './model.ts';
import { artworkFromStored } from './setting.ts';

// How artwork plugs into the station (docs/architecture.md, "A feature's station setting"): the
// `artwork` setting {minSize, fallback, stationImageVersionId}, stored in the `stations.artwork` column.

declare module '../stations/model.ts' {
  interface StationSettings {
    /** Artwork you can trust (docs/now-playing.md#the-artwork-setting-and-the-admin-routes); every key present. */
    artwork: ArtworkSetting;
  }
}

const fields = {
  minSize: Type.Integer({ ...MIN_SIZE_RANGE, description: `shortest side in px a cover must have (default ${ARTWORK_DEFAULTS.minSize})` }),
  fallback: Type.Boolean({ description: 'show the program, presenter or station image when no cover passes (default true)' }),
};

export const ArtworkInput = Type.Object(
  {
    minSize: Type.Optional(fields.minSize),
    fallback: Type.Optional(fields.fallback),
    stationImageVersionId: Type.Optional(
      Nullable({ ...Uuid, description: 'an uploaded image version of the station: its logo (else the RadioDNS logo)' }),
    ),
  },
  { additionalProperties: false, title: 'ArtworkSettingInput' },
);

export const ArtworkOut = Type.Object(
  { minSize: fields.minSize, fallback: fields.fallback, stationImageVersionId: Nullable(Type.String()) },
  { title: 'ArtworkSetting' },
);

const ArtworkBundle = Type.Object(
  {
    minSize: Type.Optional(fields.minSize),
    fallback: Type.Optional(fields.fallback),
    stationImageKey: Type.Optional({ ...BundleMediaKey, description: 'the bundle media entry of the station image' }),
  },
  { additionalProperties: false },
);

registerStationSetting({
  key: 'artwork',
  column: 'artwork',
  input: ArtworkInput,
  output: ArtworkOut,
  // Merged into what is stored: `PATCH {artwork: {minSize: 500}}` keeps the other two.
  patch: 'merge',
  fromStored: artworkFromStored,
  fromInput: (input, stored) => ({
    minSize: input.minSize ?? stored.minSize,
    fallback: input.fallback ?? stored.fallback,
    stationImageVersionId:
      input.stationImageVersionId === undefined ? stored.stationImageVersionId : (input.stationImageVersionId?.toLowerCase() ?? null),
  }),
  async check(artwork, { db, stationId }) {
    if (artwork.stationImageVersionId && !(await stationImageVersion(db, stationId, artwork.stationImageVersionId)))
      throw new ValidationError('artwork.stationImageVersionId is not an uploaded image version of this station.', [
        { path: 'artwork.stationImageVersionId', code: 'unknown', message: 'must be an uploaded image version of this station' },
      ]);
  },
  bundle: {
    schema: ArtworkBundle,
    atCreate: ({ stationImageKey: _key, ...artwork }) => artwork,
    afterMedia: ({ stationImageKey }, media) =>
      stationImageKey === undefined
        ? undefined
        : {
            input: { stationImageVersionId: media(stationImageKey, 'stationImageKey') },
            rename: { stationImageVersionId: 'stationImageKey' },
          },
  },
});

// A new minimum size or logo changes what passes: forget the failures remembered under the old rules.
onStationChanged('artwork checks under new rules', async (svc, { before, after }) => {
  if (!before) return;
  const logoBefore = before.artwork.stationImageVersionId ?? before.radiodns.logoVersionId;
  const logoAfter = after.artwork.stationImageVersionId ?? after.radiodns.logoVersionId;
  if (before.artwork.minSize === after.artwork.minSize && logoBefore === logoAfter) return;
  await svc.db('artwork_checks').where({ station_id: after.id, status: 'rejected' }).whereIn('reason', ['too-small', 'blocked']).delete();
});
