import type { Services } from '../../services.ts';
import { inTransaction, type Tx } from '../../lib/db.ts';
import { lockStation } from '../stations/lock.ts';
import { refreshScheduleRowIn } from './feed.ts';
import { refreshOnAirIn } from './onair.ts';

// docs/realtime.md#what-arrives: every station's feed holds a `schedule` row (`broadcasts: []` when there
// are none) and an `on-air` row (null when nothing is on air) from its creation, so a feed connection
// always starts with them — a client waiting for the schedule row of a station without broadcasts would
// otherwise wait forever. Written when the station is created; stations created before are given theirs
// by migrations/20261213010000_station_feed_rows_backfill.ts.

/**
 * Writes the station's `schedule` and `on-air` rows as of `now`, each only when it is missing or differs
 * (so a station created by an import bundle that brought broadcasts keeps the rows its schedule wrote).
 * No webhook: a station's creation starts no broadcast. Call with the station locked or just inserted.
 */
export async function writeScheduleRowsIn(
  tx: Tx,
  svc: Pick<Services, 'bus' | 'config'>,
  stationId: string,
  timezone: string,
  now: Date,
): Promise<void> {
  await refreshScheduleRowIn(tx, svc, stationId, timezone, now, now);
  await refreshOnAirIn(tx, svc.bus, stationId, now, now);
}

/** `writeScheduleRowsIn` in a transaction of its own, under the station lock (after the station's creation committed). */
export async function writeScheduleRows(svc: Pick<Services, 'db' | 'bus' | 'clock' | 'config'>, stationId: string): Promise<void> {
  await inTransaction(svc.db, async (tx) => {
    const station = await lockStation(tx, stationId);
    if (station) await writeScheduleRowsIn(tx, svc, stationId, station.timezone, svc.clock.now());
  });
}
