import { Type, Nullable, StringEnum, StationSlugParams, Timestamp, Uuid, type Static } from '../../http/schema.ts';
import { UUID_PATTERN } from '../../lib/ids.ts';
import { OUTCOMES } from './model.ts';

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const Seconds = Type.Number({ minimum: 0, maximum: 86400 });

// ---- Now-playing ingest (station-delivery-api.md, "Now-playing ingest") ----

export const IngestQuery = Type.Object(
  {
    stationSlug: Type.Optional(
      Type.String({ minLength: 3, maxLength: 63, description: 'public station slug; exactly one of stationSlug or stationId' }),
    ),
    stationId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 80, description: 'station id; exactly one of stationSlug or stationId' }),
    ),
  },
  { additionalProperties: false },
);
export type IngestQuery = Static<typeof IngestQuery>;

/** `Artist - Title` needs room for both 500-character parts and the separator. */
export const STREAM_TITLE_MAX = 500 + 3 + 500;

export const IngestBody = Type.Object(
  {
    eventId: Type.Optional(Text(100)),
    observedAt: Type.Optional(Type.Integer({ minimum: 0, maximum: 8640000000000000, description: 'Unix time in milliseconds' })),
    artist: Type.Optional(Text(500)),
    title: Type.Optional(Text(500)),
    streamTitle: Type.Optional(Text(STREAM_TITLE_MAX)),
    album: Type.Optional(Text(500)),
    sourceTrackId: Type.Optional(Text(120)),
    isrc: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'ISRC (12 characters after removing hyphens and upper-casing); stored for the play log, never shown to listeners',
      }),
    ),
    artworkUrl: Type.Optional(Text(2048)),
    durationSeconds: Type.Optional(Nullable(Seconds)),
    duration: Type.Optional(Seconds),
    isPlaying: Type.Optional(Type.Boolean({ default: true })),
  },
  { title: 'PlaybackObservation', additionalProperties: false },
);
export type IngestBody = Static<typeof IngestBody>;

export const IngestResponse = Type.Object({ accepted: Type.Boolean(), outcome: StringEnum(OUTCOMES) }, { title: 'PlaybackReceipt' });

// ---- Listener reads ----

export const Track = Type.Object(
  {
    artist: Nullable(Type.String()),
    title: Nullable(Type.String()),
    album: Nullable(Type.String()),
    durationSeconds: Nullable(Type.Number()),
    artworkUrl: Type.Optional(Type.String({ description: 'HTTPS; omitted when unknown' })),
    isPlaying: Type.Boolean(),
    observedAt: Nullable(Timestamp),
    receivedAt: Timestamp,
  },
  { title: 'Track' },
);

export const Freshness = Type.Object(
  {
    status: StringEnum(['fresh', 'stale', 'empty'] as const),
    thresholdSeconds: Nullable(Type.Integer()),
    ageSeconds: Nullable(Type.Integer({ minimum: 0 })),
    observedAt: Nullable(Timestamp),
    receivedAt: Nullable(Timestamp),
  },
  { title: 'Freshness' },
);

export const NowPlaying = Type.Object(
  {
    contractVersion: Type.Literal(1),
    stationId: Type.String(),
    timezone: Type.String(),
    track: Nullable(Track),
    elapsedSeconds: Nullable(Type.Integer({ minimum: 0 })),
    endsAt: Nullable(Timestamp),
    freshness: Freshness,
  },
  { title: 'NowPlaying' },
);
export type NowPlaying = Static<typeof NowPlaying>;

export const TrackHistoryQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'opaque; from nextCursor' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    from: Type.Optional(
      Type.String({ format: 'date-time', description: 'only items played at or after this instant (ISO 8601 with zone)' }),
    ),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'only items played before this instant (ISO 8601 with zone)' })),
    broadcastId: Type.Optional(Type.String({ pattern: UUID_PATTERN, description: 'only items rundown following tied to this broadcast' })),
  },
  { additionalProperties: false },
);
export type TrackHistoryQuery = Static<typeof TrackHistoryQuery>;

export const TrackHistoryItem = Type.Intersect([Type.Object({ id: Uuid }), Track], { title: 'TrackHistoryItem' });

export const TrackHistory = Type.Object(
  {
    contractVersion: Type.Literal(1),
    items: Type.Array(TrackHistoryItem),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'TrackHistory' },
);
export type TrackHistory = Static<typeof TrackHistory>;

export { StationSlugParams };
