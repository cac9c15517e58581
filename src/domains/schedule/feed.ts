import { isDeepStrictEqual } from 'node:util';
import type { Tx } from '../../lib/db.ts';
import type { FeedBus } from '../../feed/bus.ts';
import { upsertFeedRow } from '../../feed/rows.ts';
import type { FeedKind } from '../../feed/names.ts';
import { FEED_DAYS, MAX_BROADCASTS } from './model.ts';
import { presentSchedule } from './presenter.ts';
import { broadcastsOverlapping } from './queries.ts';
import type { ScheduleResponse } from './schemas.ts';
import { addDays, localDate, windowFor } from './window.ts';

/** Entry of the station-wide rows (`schedule`, `on-air`). */
export const CURRENT_ENTRY = 'current';

/**
 * Writes a station-wide feed row only when its data differs from what is stored, so a rebuild that
 * runs twice, or late, sends no second event. (jsonb reorders keys; the comparison ignores key order.)
 */
export async function writeRowIfChanged(
  tx: Tx,
  bus: FeedBus,
  row: { stationId: string; kind: FeedKind; data: unknown; now: Date },
  /** Told the data stored before (null when none) when the row changes (webhook events, onair.ts). */
  onChange?: (previous: unknown) => Promise<void>,
): Promise<boolean> {
  const stored = await tx
    .trx('feed_rows')
    .where({ station_id: row.stationId, kind: row.kind, entry: CURRENT_ENTRY })
    .first<{ data: unknown; deleted: boolean } | undefined>('data', 'deleted')
    .options({ name: 'feed_current_row' });
  if (stored && !stored.deleted && isDeepStrictEqual(stored.data, row.data)) return false;
  await upsertFeedRow(tx, bus, { stationId: row.stationId, kind: row.kind, entry: CURRENT_ENTRY, data: row.data, now: row.now });
  if (onChange) await onChange(stored && !stored.deleted ? stored.data : null);
  return true;
}

/** The `schedule` row's data at `at`: today through the next seven local days, same shape as the schedule response. */
export async function scheduleRowData(
  tx: Tx,
  stationId: string,
  timezone: string,
  at: Date,
  publicBaseUrl: string,
): Promise<ScheduleResponse> {
  const today = localDate(at, timezone);
  const window = windowFor(today, addDays(today, FEED_DAYS - 1), timezone);
  const { broadcasts, truncated } = await broadcastsOverlapping(tx.trx, stationId, window.start, window.end, MAX_BROADCASTS);
  return presentSchedule(broadcasts, truncated, timezone, at, publicBaseUrl);
}

/** Rebuilds the `schedule` row as of `at` (call with the station locked). */
export async function refreshScheduleRowIn(
  tx: Tx,
  svc: { bus: FeedBus; config: { publicBaseUrl: string } },
  stationId: string,
  timezone: string,
  at: Date,
  now: Date,
): Promise<boolean> {
  const data = await scheduleRowData(tx, stationId, timezone, at, svc.config.publicBaseUrl);
  return writeRowIfChanged(tx, svc.bus, { stationId, kind: 'schedule', data, now });
}
