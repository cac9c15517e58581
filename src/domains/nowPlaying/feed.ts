import type { Tx } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import { upsertFeedRow } from '../../feed/rows.ts';
import type { Station } from '../stations/model.ts';
import { presentNowPlaying } from './presenter.ts';
import { latestTrack } from './queries.ts';
import type { TrackRow } from './model.ts';
import { emitAfterCommit } from '../webhooks/emit.ts';

/** The `now-playing` feed row's entry: one row per station. */
export const NOW_PLAYING_ENTRY = 'current';

/**
 * Rewrites the station's `now-playing` feed row from its latest observation (read here unless the
 * caller already knows it), inside the writing transaction; the row goes out on the bus after commit.
 * Same shape as the now-playing response.
 */
export async function upsertNowPlayingRow(
  tx: Tx,
  svc: Pick<Services, 'bus' | 'clock' | 'webhooks' | 'jobs' | 'logger'>,
  station: Pick<Station, 'id' | 'timezone' | 'nowPlayingFreshnessSeconds'>,
  known?: TrackRow | null,
): Promise<void> {
  const now = svc.clock.now();
  const latest = known === undefined ? await latestTrack(tx.trx, station.id) : known;
  const data = presentNowPlaying(station, latest, now);
  await upsertFeedRow(tx, svc.bus, { stationId: station.id, kind: 'now-playing', entry: NOW_PLAYING_ENTRY, data, now });
  emitAfterCommit(tx, svc, station.id, 'now-playing.changed', data);
}
