import type { Knex } from 'knex';
import type { Statement } from '../../lib/pipeline.ts';
import { lockStationStatement } from '../stations/lock.ts';
import { TRACK_COLUMNS, type ObservationRow, type TrackRow } from './model.ts';

// Reads of stored observations. Each follows one of the indexes of the observation_following migration.
// The per-ingest and per-read ones are named prepared statements (`options({name})`): Postgres plans
// them once per connection instead of on every call, which costs more than running them.

/**
 * The station's latest observation: greatest observedAt (its receipt when absent), ties by later
 * receipt, so a late retry of an old track never replaces the current one
 * (docs/now-playing.md#the-now-playing-and-track-history-answers). With `heardAt` (a stream's heard time),
 * the latest one whose play time (`sort_at`) is at or before it.
 */
export async function latestTrack(db: Knex, stationId: string, heardAt?: Date): Promise<TrackRow | null> {
  const query = db<ObservationRow>('observations')
    .select([...TRACK_COLUMNS])
    .where('station_id', stationId);
  if (heardAt) query.andWhere('sort_at', '<=', heardAt);
  const row = await query
    .orderBy([
      { column: 'sort_at', order: 'desc' },
      { column: 'receipt_seq', order: 'desc' },
    ])
    .first()
    .options({ name: heardAt ? 'nowplaying_latest_track_at' : 'nowplaying_latest_track' });
  return (row as TrackRow | undefined) ?? null;
}

/**
 * latestTrack's choice as SQL: the station's latest observation (`columns` of it; `station` is the SQL
 * of the station id, a parameter), for a statement that must decide on the play on air in its own
 * snapshot (the inbox's votes: docs/inbox.md#likes).
 */
export const latestObservationSql = (columns: string, station: string): string =>
  `SELECT ${columns} FROM observations WHERE station_id = ${station} ORDER BY sort_at DESC, receipt_seq DESC LIMIT 1`;

/**
 * The earliest play time after `at` of a stored observation (playing ones only with `playing`): on a
 * stream heard at `at`, the answer changes when that one becomes audible.
 */
export async function nextPlayAfter(db: Knex, stationId: string, at: Date, playing = false): Promise<Date | null> {
  const query = db<ObservationRow>('observations').select('sort_at').where('station_id', stationId).andWhere('sort_at', '>', at);
  if (playing) query.andWhere('is_playing', true);
  const row = await query
    .orderBy('sort_at', 'asc')
    .first()
    .options({ name: playing ? 'nowplaying_next_playing_after' : 'nowplaying_next_play_after' });
  return (row as { sort_at: Date } | undefined)?.sort_at ?? null;
}

const TIMESTAMPS = ['observed_at', 'received_at', 'sort_at', 'followed_at'] as const;

/** A row that travelled as JSON (to_jsonb) back into its column types. */
export function reviveRow<T>(json: Record<string, unknown> | null): T | null {
  if (!json) return null;
  for (const key of TIMESTAMPS) if (typeof json[key] === 'string') json[key] = new Date(json[key] as string);
  return json as T;
}

/**
 * The first statements of an ingest: lock the station row (so one station's observations are decided
 * one at a time), then read the most recently received observation (the collapse rule) and the latest
 * one (the now-playing row). Two statements on purpose: in READ COMMITTED a statement reads with the
 * snapshot it started with, so a read in the locking statement itself would not see what the previous
 * lock holder committed while this one waited (concurrent identical payloads would each miss the
 * others and all be stored). They travel together (lib/pipeline.ts).
 */
export const ingestContextStatements = (stationId: string): Statement[] => [
  lockStationStatement(stationId),
  {
    name: 'nowplaying_ingest_context',
    text: `SELECT (SELECT to_jsonb(r) FROM (SELECT * FROM observations WHERE station_id = $1 ORDER BY receipt_seq DESC LIMIT 1) r) AS last_received,
                  (SELECT to_jsonb(l) FROM (
                     SELECT ${TRACK_COLUMNS.join(', ')} FROM observations WHERE station_id = $1 ORDER BY sort_at DESC, receipt_seq DESC LIMIT 1
                   ) l) AS latest`,
    values: [stationId],
  },
];

/** The answers to `ingestContextStatements`; null when the station is gone. */
export function ingestContextOf([locked, context]: Array<Array<Record<string, unknown>>>): {
  lastReceived: ObservationRow | null;
  latest: TrackRow | null;
} | null {
  if (locked.length === 0) return null;
  const row = context[0] as { last_received: Record<string, unknown> | null; latest: Record<string, unknown> | null } | undefined;
  return { lastReceived: reviveRow<ObservationRow>(row?.last_received ?? null), latest: reviveRow<TrackRow>(row?.latest ?? null) };
}

export async function observationById(db: Knex, id: string): Promise<ObservationRow | null> {
  return (await db<ObservationRow>('observations').where({ id }).first().options({ name: 'nowplaying_observation_by_id' })) ?? null;
}

/** Position in the history order, carried by a signed cursor. */
export interface HistoryPosition {
  sortAt: string;
  seq: number;
}

/** Playing observations, newest first; `limit + 1` rows so the caller knows whether another page exists. */
/** Track-history filters: play time in [from, to), the broadcast rundown following tied the item to. */
export interface HistoryFilters {
  from?: Date;
  to?: Date;
  broadcastId?: string;
  /** Heard time of a stream: only items played at or before it (audible there). */
  heardAt?: Date;
}

export async function historyRows(
  db: Knex,
  stationId: string,
  limit: number,
  after: HistoryPosition | null,
  filters: HistoryFilters = {},
): Promise<TrackRow[]> {
  const query = db<ObservationRow>('observations')
    .select([...TRACK_COLUMNS])
    .where({ station_id: stationId, is_playing: true })
    .orderBy([
      { column: 'sort_at', order: 'desc' },
      { column: 'receipt_seq', order: 'desc' },
    ])
    .limit(limit + 1);
  if (after) query.andWhereRaw('(sort_at, receipt_seq) < (?::timestamptz, ?::bigint)', [after.sortAt, after.seq]);
  if (filters.from) query.andWhere('sort_at', '>=', filters.from);
  if (filters.to) query.andWhere('sort_at', '<', filters.to);
  if (filters.broadcastId) query.andWhere('broadcast_id', filters.broadcastId);
  if (filters.heardAt) query.andWhere('sort_at', '<=', filters.heardAt);
  return (await query) as unknown as TrackRow[];
}
