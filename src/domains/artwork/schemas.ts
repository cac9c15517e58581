import { Nullable, StringEnum, Timestamp, Type, Uuid, type Static } from '../../http/schema.ts';
import { REJECT_REASONS } from './model.ts';
import { ARTWORK_SOURCES } from './trackArt.ts';

// Admin artwork routes (docs/now-playing.md#the-artwork-setting-and-the-admin-routes): pins, blocks, the review.

/** A track's `artwork`, as every listener read, the feed and the review show it. */
export const ArtworkVariants = Type.Object(
  { '300': Type.String(), '600': Type.String(), '1200': Type.String() },
  { title: 'ArtworkVariants', description: 'square JPEG renditions by side in px (absolute URLs; never upscaled)' },
);

export const Artwork = Type.Object(
  {
    url: Type.String({ description: 'absolute URL of the image' }),
    source: StringEnum(ARTWORK_SOURCES, {
      description:
        'operator, ingest, catalogue: cover art Waveline checked and keeps; program, presenter, station: a fallback image (a show or station picture, not a cover)',
    }),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    variants: ArtworkVariants,
  },
  { title: 'Artwork' },
);

const StationId = Type.String({ minLength: 1, maxLength: 80 });

export const PinParams = Type.Object(
  {
    stationId: StationId,
    pinId: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._~-]+$', description: 'chosen by the caller' }),
  },
  { additionalProperties: false },
);
export type PinParams = Static<typeof PinParams>;

export const BlockParams = Type.Object({ stationId: StationId, blockId: Uuid }, { additionalProperties: false });
export type BlockParams = Static<typeof BlockParams>;

const Match = Type.Object(
  {
    artist: Type.String({ minLength: 1, maxLength: 500, description: 'compared after NFKC, case folding, trimming and collapsing spaces' }),
    title: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: 'without it the pin matches every track of the artist' }),
    ),
  },
  { additionalProperties: false },
);

const ImageUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'http or https; fetched and checked by the worker' });

const PinImage = Nullable(
  Type.Union([
    Type.Object({ versionId: { ...Uuid, description: 'an uploaded image version of the station' } }, { additionalProperties: false }),
    Type.Object({ url: ImageUrl }, { additionalProperties: false }),
  ]),
);

export const PinBody = Type.Object(
  { match: Match, image: PinImage },
  { additionalProperties: false, description: '`image: null`: these tracks show no art (no fallback applies).' },
);
export type PinBody = Static<typeof PinBody>;

const Reason = Nullable(StringEnum(REJECT_REASONS));

export const Pin = Type.Object(
  {
    id: Type.String(),
    match: Match,
    image: PinImage,
    status: StringEnum(['pending', 'kept', 'rejected'] as const, { description: 'while not kept, its tracks use the next source' }),
    reason: Reason,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'ArtworkPin' },
);
export type Pin = Static<typeof Pin>;

export const PinList = Type.Object({ pins: Type.Array(Pin) });

export const BlockBody = Type.Union(
  [
    Type.Object({ url: ImageUrl }, { additionalProperties: false }),
    Type.Object({ versionId: { ...Uuid, description: 'an uploaded image version of the station' } }, { additionalProperties: false }),
  ],
  { description: 'The image to block, by URL (fetched once) or uploaded version.' },
);
export type BlockBody = Static<typeof BlockBody>;

export const Block = Type.Object(
  {
    id: Type.String(),
    hash: Type.String({ description: '64-bit dHash, 16 hex digits' }),
    createdAt: Timestamp,
  },
  { title: 'ArtworkBlock' },
);
export type Block = Static<typeof Block>;
export const BlockList = Type.Object({ blocks: Type.Array(Block) });

export const RecentQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })) },
  { additionalProperties: false },
);
export type RecentQuery = Static<typeof RecentQuery>;

export const RecentTracks = Type.Object({
  tracks: Type.Array(
    Type.Object({
      artist: Nullable(Type.String()),
      title: Nullable(Type.String()),
      lastPlayedAt: Timestamp,
      plays: Type.Integer(),
      artwork: Nullable(Artwork),
      rejected: Type.Array(
        Type.Object({
          source: StringEnum(['operator', 'ingest', 'catalogue'] as const),
          url: Type.String(),
          reason: StringEnum(REJECT_REASONS),
          at: Timestamp,
        }),
      ),
    }),
  ),
});
export type RecentTracks = Static<typeof RecentTracks>;
