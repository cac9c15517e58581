import { Type, Nullable, StringEnum, StationSlugParams, Timestamp, Uuid, type Static } from '../../http/schema.ts';
import { UUID_PATTERN } from '../../lib/ids.ts';
import { OUTCOMES } from './model.ts';
import { StreamParam, StreamQuery, StreamRef } from '../stations/streams.ts';
import { Broadcast, UpNext } from '../schedule/schemas.ts';
import { Artwork } from '../artwork/schemas.ts';

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const Seconds = Type.Number({ minimum: 0, maximum: 86400 });

// ---- Now-playing ingest (docs/now-playing.md#for-encoder-vendors) ----

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
    artworkUrl: Type.Optional(
      Type.String({
        description:
          'HTTPS; the `600` variant of the cover Waveline keeps, or a reported URL Waveline could not fetch; never a fallback image; omitted when unknown',
      }),
    ),
    /** The art to show and where it came from; null while nothing is kept yet and when no source passes. */
    artwork: Nullable(Artwork),
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
    stream: Type.Optional(StreamRef),
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
    stream: Type.Optional(StreamParam),
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
    stream: Type.Optional(StreamRef),
  },
  { title: 'TrackHistory' },
);
export type TrackHistory = Static<typeof TrackHistory>;

const LIVE_EXAMPLE = {
  contractVersion: 1,
  stationId: 'st_demo0000000000000000',
  timezone: 'Europe/Berlin',
  asOf: '2026-11-21T10:15:02.123Z',
  stream: { key: 'mp3', latencySeconds: 6 },
  broadcast: {
    id: '0b6f6d2e-3c1a-4f5e-9a77-2d4c8e1f0a93',
    title: 'Morning Show',
    startsAt: '2026-11-21T06:00:00.000Z',
    endsAt: '2026-11-21T10:00:00.000Z',
    timezone: 'Europe/Berlin',
    localDate: '2026-11-21',
    resolution: 'exact',
    status: 'live',
    cancellationReason: '',
    repeatOfId: null,
    nature: 'live',
    program: { id: '5d0c1f7e-2b9a-4c4e-8f3d-7a6b5c4d3e2f', title: 'Morning Show', profileId: null, image: null },
    presenters: [{ id: '9e8d7c6b-5a49-4837-a625-140f1e2d3c4b', title: 'Ana', image: null }],
  },
  nowPlaying: {
    track: {
      artist: 'Nina Simone',
      title: 'Feeling Good',
      album: 'I Put a Spell on You',
      durationSeconds: 173,
      artworkUrl: 'https://radio.example/api/media/public/radio-1/0b7c6d5e-4f3a-4b2c-9d1e-8f7a6b5c4d3e/600',
      artwork: {
        url: 'https://radio.example/api/media/public/radio-1/0b7c6d5e-4f3a-4b2c-9d1e-8f7a6b5c4d3e',
        source: 'ingest',
        width: 1400,
        height: 1400,
        variants: {
          '300': 'https://radio.example/api/media/public/radio-1/0b7c6d5e-4f3a-4b2c-9d1e-8f7a6b5c4d3e/300',
          '600': 'https://radio.example/api/media/public/radio-1/0b7c6d5e-4f3a-4b2c-9d1e-8f7a6b5c4d3e/600',
          '1200': 'https://radio.example/api/media/public/radio-1/0b7c6d5e-4f3a-4b2c-9d1e-8f7a6b5c4d3e/1200',
        },
      },
      isPlaying: true,
      observedAt: '2026-11-21T10:14:20.000Z',
      receivedAt: '2026-11-21T10:14:20.412Z',
    },
    elapsedSeconds: 36,
    endsAt: '2026-11-21T10:17:19.000Z',
    freshness: {
      status: 'fresh',
      thresholdSeconds: 600,
      ageSeconds: 36,
      observedAt: '2026-11-21T10:14:20.000Z',
      receivedAt: '2026-11-21T10:14:20.412Z',
    },
  },
  upNext: [
    {
      itemId: '3c2b1a09-8f7e-4d6c-b5a4-9382716f5e4d',
      kind: 'track',
      artist: 'Miles Davis',
      title: 'So What',
      durationSeconds: 562,
      plannedStartsAt: '2026-11-21T10:17:13.000Z',
    },
  ],
};

/** `GET …/live` (docs/now-playing.md#the-live-answer-get-livestreamkey): what a player shows, every part at one instant. */
export const Live = Type.Object(
  {
    contractVersion: Type.Literal(1),
    stationId: Type.String(),
    timezone: Type.String(),
    asOf: Timestamp,
    stream: Nullable(StreamRef),
    broadcast: Nullable(Broadcast),
    nowPlaying: Type.Object(
      { track: Nullable(Track), elapsedSeconds: Nullable(Type.Integer({ minimum: 0 })), endsAt: Nullable(Timestamp), freshness: Freshness },
      { title: 'LiveNowPlaying' },
    ),
    upNext: Nullable(UpNext),
  },
  { title: 'Live', examples: [LIVE_EXAMPLE] },
);
export type Live = Static<typeof Live>;

export { StationSlugParams, StreamQuery };
