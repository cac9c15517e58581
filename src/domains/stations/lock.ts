import { numbered, type Statement } from '../../lib/pipeline.ts';
import type { Tx } from '../../lib/db.ts';

// The station row lock: every writer that rebuilds a station's feed rows (schedule, on-air, now
// playing, rundown following) takes it first, so its compare-then-write never races another one.

const LOCK_STATION_SQL = 'SELECT timezone FROM stations WHERE id = ? FOR UPDATE';
const LOCK_STATION_NUMBERED = numbered(LOCK_STATION_SQL);

/**
 * Locks the station row for the rest of the transaction and returns its time zone (null when the
 * station is gone). Every feed rebuild of a station runs under this lock, so a compare-then-write of
 * a row never races another rebuild of the same station.
 */
export async function lockStation(tx: Tx, stationId: string): Promise<{ timezone: string } | null> {
  const result = await tx.trx
    .raw<{ rows: Array<{ timezone: string }> }>(LOCK_STATION_SQL, [stationId])
    .options({ name: 'schedule_lock_station' });
  return result.rows[0] ?? null;
}

/** `lockStation` for a pipelined transaction (lib/pipeline.ts): answers one row, or none when the station is gone. */
export const lockStationStatement = (stationId: string): Statement => ({
  name: 'lock_station',
  text: LOCK_STATION_NUMBERED,
  values: [stationId],
});
