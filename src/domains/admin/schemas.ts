import { Type, Nullable, Uuid, Timestamp, type Static } from '../../http/schema.ts';
import { CreateStationBody, AdminStation } from '../stations/schemas.ts';
import { BundleMediaKey, stationSettings } from '../stations/settings.ts';
import { CreateCredentialBody, CreatedCredential } from '../auth/schemas.ts';
import { Key, PutContentTypeBody, PutRecordBody } from '../content/schemas.ts';
import { BroadcastBody, PresenterBody, ProgramBody, RundownItemIn } from '../schedule/schemas.ts';
import { UploadQuery, UploadReceipt } from '../media/schemas.ts';
import { MAX_BROADCAST_DAYS } from '../schedule/model.ts';

// The station bundle of `POST /admin/v1/import` (docs/demo.md). Each part reuses the body schema of
// the admin route that writes the same thing, plus the id that route takes in its path; only media
// (base64 instead of a raw upload) and broadcast times (optionally relative to the import day) differ.

/** A bundle-local name for a media file; records reference media by it (a UUID from an export works too). */
export const MediaKey = BundleMediaKey;

export const BundleMedia = Type.Object(
  {
    key: MediaKey,
    mime: Type.String({ minLength: 3, maxLength: 255, description: 'media type of the bytes, e.g. image/png' }),
    data: Type.String({ minLength: 1, description: 'the file, base64 (standard alphabet, padding optional)' }),
    alt: UploadQuery.properties.alt,
    credits: UploadQuery.properties.credits,
    focalX: UploadQuery.properties.focalX,
    focalY: UploadQuery.properties.focalY,
  },
  { additionalProperties: false },
);

const MediaRef = Type.Object(
  {
    key: Type.Optional(MediaKey),
    versionId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'the same as key (for bundles exported with version ids)' }),
    ),
  },
  { additionalProperties: false, minProperties: 1, maxProperties: 1, description: 'names one media entry of the bundle by its key' },
);

export const BundleRecord = Type.Object(
  {
    id: Uuid,
    type: PutRecordBody.properties.type,
    values: PutRecordBody.properties.values,
    document: PutRecordBody.properties.document,
    media: Type.Optional(Type.Array(MediaRef, { maxItems: 100 })),
    related: PutRecordBody.properties.related,
    published: Type.Optional(Type.Boolean({ description: 'publish the record after every draft is saved (default false)' })),
  },
  { additionalProperties: false },
);

export const BundleType = Type.Object({ key: Key, ...PutContentTypeBody.properties }, { additionalProperties: false });

export const RelativeTime = Type.Object(
  {
    dayOffset: Type.Integer({ minimum: -366, maximum: 366, description: 'days after today in the station time zone (0 = the import day)' }),
    start: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'local HH:MM' }),
    durationMinutes: Type.Integer({
      minimum: 1,
      maximum: MAX_BROADCAST_DAYS * 24 * 60,
      description: 'elapsed minutes (across a DST change too)',
    }),
  },
  { additionalProperties: false },
);

const { startsAt, endsAt, ...broadcastRest } = BroadcastBody.properties;
export const BundleBroadcast = Type.Object(
  {
    id: Uuid,
    ...broadcastRest,
    startsAt: Type.Optional(startsAt),
    endsAt: Type.Optional(endsAt),
    relative: Type.Optional(RelativeTime),
  },
  { additionalProperties: false, description: 'either startsAt and endsAt, or relative' },
);

export const BundleRundownItem = Type.Object(
  {
    ...RundownItemIn.properties,
    offsetSeconds: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: MAX_BROADCAST_DAYS * 86400,
        description: 'planned start relative to the broadcast start (instead of plannedStartsAt)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const BundleRundown = Type.Object(
  { broadcastId: Uuid, items: Type.Array(BundleRundownItem, { maxItems: 1000 }) },
  { additionalProperties: false },
);

/** A program's or presenter's picture in a bundle names a bundle media entry (a new station has no versions yet). */
const ImageKey = Type.Optional({ ...MediaKey, description: 'the bundle media entry (an image) of its picture' });
const { imageVersionId: _presenterImage, ...presenterFields } = PresenterBody.properties;
const { imageVersionId: _programImage, ...programFields } = ProgramBody.properties;
const BundlePresenter = Type.Object({ id: Uuid, ...presenterFields, imageKey: ImageKey }, { additionalProperties: false });
const BundleProgram = Type.Object({ id: Uuid, ...programFields, imageKey: ImageKey }, { additionalProperties: false });

/**
 * The station as POST /admin/v1/stations takes it; a feature's setting in the form its bundle part gives
 * (RadioDNS's logo and the podcast cover name a media key of the bundle: `logoKey`, `imageKey`).
 */
const BundleStation = Type.Object(
  {
    ...CreateStationBody.properties,
    ...Object.fromEntries(stationSettings().flatMap(({ key, bundle }) => (bundle ? [[key, Type.Optional(bundle.schema)]] : []))),
  },
  { additionalProperties: false },
);

export const Bundle = Type.Object(
  {
    bundleVersion: Type.Optional(Type.Literal(1)),
    station: BundleStation,
    credentials: Type.Optional(Type.Array(CreateCredentialBody, { maxItems: 20 })),
    types: Type.Optional(Type.Array(BundleType, { maxItems: 100 })),
    media: Type.Optional(Type.Array(BundleMedia, { maxItems: 100 })),
    records: Type.Optional(Type.Array(BundleRecord, { maxItems: 2000 })),
    presenters: Type.Optional(Type.Array(BundlePresenter, { maxItems: 1000 })),
    programs: Type.Optional(Type.Array(BundleProgram, { maxItems: 1000 })),
    broadcasts: Type.Optional(Type.Array(BundleBroadcast, { maxItems: 10000 })),
    rundowns: Type.Optional(Type.Array(BundleRundown, { maxItems: 10000 })),
  },
  { additionalProperties: false },
);
export type Bundle = Static<typeof Bundle>;
export type BundleRecord = Static<typeof BundleRecord>;
export type BundleBroadcast = Static<typeof BundleBroadcast>;
export type BundleRundown = Static<typeof BundleRundown>;

export const ImportResult = Type.Object({
  station: AdminStation,
  credentials: Type.Array(CreatedCredential, { description: 'with their secrets, shown once' }),
  types: Type.Array(Type.Object({ key: Type.String(), version: Type.Integer() })),
  media: Type.Array(Type.Object({ key: Type.String(), ...UploadReceipt.properties })),
  records: Type.Array(Type.Object({ id: Uuid, revision: Type.Integer(), publishedAt: Nullable(Timestamp) })),
  presenters: Type.Array(Type.Object({ id: Uuid })),
  programs: Type.Array(Type.Object({ id: Uuid })),
  broadcasts: Type.Array(Type.Object({ id: Uuid, startsAt: Timestamp, endsAt: Timestamp })),
  rundowns: Type.Array(Type.Object({ broadcastId: Uuid, items: Type.Integer({ description: 'number of items stored' }) })),
});
export type ImportResult = Static<typeof ImportResult>;
