import { feedRowBindings, feedRowCtes, type FeedRowInput } from '../../feed/rows.ts';
import { numbered, type Statement } from '../../lib/pipeline.ts';
import type { TrackArtView } from '../artwork/trackArt.ts';
import { COLLAPSE_WINDOW_MS, type ObservationRow } from './model.ts';

// The statements that store an observation (store.ts): the insert alone, the insert with the
// `now-playing` row it shows, and the usual path's guarded insert. Named (prepared): Postgres plans
// each once per connection.

export type ObservationInsert = Omit<ObservationRow, 'receipt_seq' | 'broadcast_id' | 'rundown_item_id' | 'score' | 'artwork_view'> & {
  artist_key: string | null;
  title_key: string | null;
  artwork_view: TrackArtView | null;
};
const INSERT_COLUMNS = [
  'id',
  'station_id',
  'event_id',
  'fingerprint',
  'artist',
  'title',
  'album',
  'duration_seconds',
  'artwork_url',
  'source_track_id',
  'isrc',
  'is_playing',
  'observed_at',
  'received_at',
  'sort_at',
  'outcome',
  'accepted',
  'followed_at',
  'credential_id',
  'artist_key',
  'title_key',
  'artwork_view',
] as const satisfies ReadonlyArray<keyof ObservationInsert>;

// Rule 1's unique constraint decides a retry (no row comes back).
const INSERT_OBSERVATION = `
  INSERT INTO observations (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})
  ON CONFLICT (station_id, event_id) DO NOTHING
  RETURNING *`;
const insertValues = (values: ObservationInsert): unknown[] =>
  INSERT_COLUMNS.map((column) =>
    column === 'artwork_view' ? (values.artwork_view === null ? null : JSON.stringify(values.artwork_view)) : values[column],
  );

// A stored observation bumps the station's feed seq and rewrites its `now-playing` row in the same
// statement (feed/rows.ts `feedRowCtes`) — one statement instead of three.
const INSERT_SQL = numbered(`
  WITH ins AS (${INSERT_OBSERVATION}), ${feedRowCtes('EXISTS (SELECT 1 FROM ins)')}
  SELECT ins.*, (SELECT seq FROM feed) AS feed_seq FROM ins`);

const INSERT_ONLY_SQL = numbered(INSERT_OBSERVATION);

export function insertOnlyStatement(values: ObservationInsert): Statement {
  return { name: 'nowplaying_insert_observation_only', text: INSERT_ONLY_SQL, values: insertValues(values) };
}

export function insertStatement(values: ObservationInsert, feedRow: FeedRowInput, now: Date): Statement {
  return { name: 'nowplaying_insert_observation', text: INSERT_SQL, values: [...insertValues(values), ...feedRowBindings(feedRow, now)] };
}

// The guarded insert of `storeUsually`. Its parameters are typed (an INSERT … SELECT does not take
// them from the columns). The later-moment check and `last` use the (station, sort_at, receipt_seq)
// and (station, receipt_seq) indexes. The collapse guard is wider than rule 3 (any pair without
// eventIds within the window, whatever the track): `collapses` decides exactly on what comes back.
const INSERT_TYPES: Record<(typeof INSERT_COLUMNS)[number], string> = {
  id: 'uuid',
  station_id: 'text',
  event_id: 'text',
  fingerprint: 'text',
  artist: 'text',
  title: 'text',
  album: 'text',
  duration_seconds: 'float8',
  artwork_url: 'text',
  source_track_id: 'text',
  isrc: 'text',
  is_playing: 'boolean',
  observed_at: 'timestamptz',
  received_at: 'timestamptz',
  sort_at: 'timestamptz',
  outcome: 'text',
  accepted: 'boolean',
  followed_at: 'timestamptz',
  credential_id: 'uuid',
  artist_key: 'text',
  title_key: 'text',
  artwork_view: 'jsonb',
};
const GUARDED_INSERT_SQL = numbered(`
  WITH last AS (
    SELECT * FROM observations WHERE station_id = ? ORDER BY receipt_seq DESC LIMIT 1
  ), guard AS (
    SELECT EXISTS (SELECT 1 FROM stations WHERE id = ?)
       AND NOT EXISTS (SELECT 1 FROM observations WHERE station_id = ? AND sort_at > ?::timestamptz)
       AND NOT EXISTS (SELECT 1 FROM last WHERE ?::text IS NULL AND last.event_id IS NULL AND last.received_at >= ?::timestamptz) AS ok
  ), ins AS (
    INSERT INTO observations (${INSERT_COLUMNS.join(', ')})
    SELECT ${INSERT_COLUMNS.map((column) => `?::${INSERT_TYPES[column]}`).join(', ')} FROM guard WHERE guard.ok
    ON CONFLICT (station_id, event_id) DO NOTHING
    RETURNING *
  ), ${feedRowCtes('EXISTS (SELECT 1 FROM ins)')}
  SELECT guard.ok AS guard_ok, CASE WHEN NOT guard.ok THEN (SELECT to_jsonb(last) FROM last) END AS last_received,
         ins.*, (SELECT seq FROM feed) AS feed_seq
  FROM guard LEFT JOIN ins ON true`);

/** With `guard_ok` false or a duplicate eventId, the observation's columns are null (nothing was inserted). */
export type GuardedAnswer = Omit<ObservationRow, 'id'> & {
  id: string | null;
  guard_ok: boolean;
  last_received: Record<string, unknown> | null;
  feed_seq: number;
};

export function guardedInsertStatement(values: ObservationInsert, feedRow: FeedRowInput, now: Date): Statement {
  const windowStart = new Date(values.received_at.getTime() - COLLAPSE_WINDOW_MS);
  return {
    name: 'nowplaying_insert_guarded',
    text: GUARDED_INSERT_SQL,
    values: [
      values.station_id,
      values.station_id,
      values.station_id,
      values.sort_at,
      values.event_id,
      windowStart,
      ...insertValues(values),
      ...feedRowBindings(feedRow, now),
    ],
  };
}
