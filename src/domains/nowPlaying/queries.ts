import type { Knex } from 'knex';
import { TRACK_COLUMNS, type ObservationRow, type TrackRow } from './model.ts';

// Reads of stored observations. Each follows one of the indexes of the observation_following migration.

/**
 * The station's latest observation: greatest observedAt (its receipt when absent), ties by later
 * receipt, so a late retry of an old track never replaces the current one (decisions.md, Clarifications).
 */
export async function latestTrack(db: Knex, stationId: string): Promise<TrackRow | null> {
  const row = await db<ObservationRow>('observations')
    .select([...TRACK_COLUMNS])
    .where('station_id', stationId)
    .orderBy([{ column: 'sort_at', order: 'desc' }, { column: 'receipt_seq', order: 'desc' }])
    .first();
  return (row as TrackRow | undefined) ?? null;
}

/** The most recently received observation: what the collapse rule compares with. */
export async function lastReceived(db: Knex, stationId: string): Promise<ObservationRow | null> {
  const row = await db<ObservationRow>('observations').where('station_id', stationId).orderBy('receipt_seq', 'desc').first();
  return row ?? null;
}

export async function observationById(db: Knex, id: string): Promise<ObservationRow | null> {
  return (await db<ObservationRow>('observations').where({ id }).first()) ?? null;
}

/** Position in the history order, carried by a signed cursor. */
export interface HistoryPosition {
  sortAt: string;
  seq: number;
}

/** Playing observations, newest first; `limit + 1` rows so the caller knows whether another page exists. */
export async function historyRows(db: Knex, stationId: string, limit: number, after: HistoryPosition | null): Promise<TrackRow[]> {
  const query = db<ObservationRow>('observations')
    .select([...TRACK_COLUMNS])
    .where({ station_id: stationId, is_playing: true })
    .orderBy([{ column: 'sort_at', order: 'desc' }, { column: 'receipt_seq', order: 'desc' }])
    .limit(limit + 1);
  if (after) query.andWhereRaw('(sort_at, receipt_seq) < (?::timestamptz, ?::bigint)', [after.sortAt, after.seq]);
  return (await query) as unknown as TrackRow[];
}
