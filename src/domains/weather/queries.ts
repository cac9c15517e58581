import type { Db } from '../../lib/db.ts';
import type { Feed, StoredSnapshot } from './model.ts';

const SOURCES: Record<Feed, { table: string; column: string }> = {
  weather: { table: 'weather_snapshots', column: 'snapshots_json' },
  traffic: { table: 'traffic_snapshots', column: 'snapshot_json' },
};

/** The station's stored snapshot of a feed (one primary-key read), or null when none was ever stored. */
export async function findStoredSnapshot(db: Db, feed: Feed, stationId: string): Promise<StoredSnapshot | null> {
  const { table, column } = SOURCES[feed];
  const row = await db(table).where({ station_id: stationId }).first('observed_at', 'received_at', `${column} AS json`);
  if (!row) return null;
  return { observedAt: row.observed_at as Date, receivedAt: row.received_at as Date, json: row.json as string };
}
