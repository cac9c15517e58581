import type { StoredArt } from '../artwork/trackArt.ts';

// Observations: now-playing metadata as reported by encoders and automation systems.

export const OUTCOMES = [
  'recorded',
  'matched',
  'uncertain',
  'ignored',
  'rejected',
  'not-playing',
  'no-live-broadcast',
  'on-air-not-following-rundown',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What the ingest endpoint answers. */
export interface IngestResult {
  accepted: boolean;
  outcome: Outcome;
}

/** An observation bound from the ingest body (aliases merged, streamTitle split, defaults applied). */
export interface ObservationInput {
  eventId: string | null;
  observedAt: Date | null;
  artist: string | null;
  title: string | null;
  album: string | null;
  durationSeconds: number | null;
  artworkUrl: string | null;
  sourceTrackId: string | null;
  /** Normalised: no hyphens, upper case (docs/now-playing.md#body-fields). */
  isrc: string | null;
  isPlaying: boolean;
}

export interface ObservationRow extends StoredArt {
  id: string;
  station_id: string;
  event_id: string | null;
  fingerprint: string;
  artist: string | null;
  title: string | null;
  album: string | null;
  duration_seconds: number | null;
  artwork_url: string | null;
  source_track_id: string | null;
  /** Never shown to listeners (only the play log reads it). */
  isrc: string | null;
  is_playing: boolean;
  observed_at: Date | null;
  received_at: Date;
  sort_at: Date;
  outcome: Outcome;
  accepted: boolean;
  broadcast_id: string | null;
  rundown_item_id: string | null;
  score: number | null;
  receipt_seq: number;
  followed_at: Date | null;
  /** The credential that reported it (the play log shows its label). */
  credential_id: string | null;
}

/** Columns the listener presenters need (never source_track_id, never isrc). */
export const TRACK_COLUMNS = [
  'id',
  'artist',
  'title',
  'album',
  'duration_seconds',
  'artwork_url',
  'catalogue_url',
  'artwork_view',
  'is_playing',
  'observed_at',
  'received_at',
  'sort_at',
  'receipt_seq',
] as const;
export type TrackRow = Pick<ObservationRow, (typeof TRACK_COLUMNS)[number]>;

/** The moment an observation describes: observedAt, or its receipt when the encoder did not say. */
export const momentOf = (row: Pick<ObservationRow, 'observed_at' | 'received_at'>): Date => row.observed_at ?? row.received_at;

/** Wait for rundown following at most this long before answering `recorded` (docs/now-playing.md#responses, rule 9). */
export const FOLLOW_WAIT_MS = 2000;
/** Payloads without eventId collapse into the most recently received observation this recent (rule 3). */
export const COLLAPSE_WINDOW_MS = 30_000;
/** observedAt further ahead of the server clock than this is rejected (rule 2). */
export const MAX_FUTURE_MS = 300_000;
/** Ingest body limit, enforced while reading. */
export const INGEST_BODY_LIMIT = 8 * 1024;
