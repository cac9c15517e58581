import type { Services } from '../../services.ts';
import { inTransaction, type Tx } from '../../lib/db.ts';
import type { FeedBus } from '../../feed/bus.ts';
import { upsertFeedRow } from '../../feed/rows.ts';
import { lockStation } from '../stations/lock.ts';
import type { Station } from '../stations/model.ts';
import { NOW_PLAYING_ENTRY, nowPlayingRow } from './feed.ts';
import { latestTrack } from './queries.ts';

// docs/realtime.md#what-arrives: every station's feed holds a `now-playing` row from its creation (track
// null, freshness `empty` before its first observation), so a feed connection always starts with it.
// Stations created before are given theirs by migrations/20261213010000_station_feed_rows_backfill.ts.

type StationView = Pick<Station, 'id' | 'timezone' | 'nowPlayingFreshnessSeconds'>;

/**
 * Writes the station's `now-playing` row as of `now` when it has none (an existing row is ingest's and
 * stays). No webhook: nothing started playing. Call with the station locked or just inserted.
 */
export async function writeNowPlayingRowIn(tx: Tx, bus: FeedBus, station: StationView, now: Date): Promise<boolean> {
  const stored = await tx
    .trx('feed_rows')
    .where({ station_id: station.id, kind: 'now-playing', entry: NOW_PLAYING_ENTRY, deleted: false })
    .first('seq');
  if (stored) return false;
  await upsertFeedRow(tx, bus, { ...nowPlayingRow(station, await latestTrack(tx.trx, station.id), now), now });
  return true;
}

/** `writeNowPlayingRowIn` in a transaction of its own, under the station lock (after the station's creation committed). */
export async function writeNowPlayingRow(svc: Pick<Services, 'db' | 'bus' | 'clock'>, station: StationView): Promise<boolean> {
  return inTransaction(svc.db, async (tx) => {
    return (await lockStation(tx, station.id)) ? writeNowPlayingRowIn(tx, svc.bus, station, svc.clock.now()) : false;
  });
}
