import type { Tx } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import { upsertFeedRow, type FeedRowInput } from '../../feed/rows.ts';
import type { Station } from '../stations/model.ts';
import { presentNowPlaying } from './presenter.ts';
import { latestTrack } from './queries.ts';
import type { TrackRow } from './model.ts';
import { emitAfterCommit } from '../webhooks/emit.ts';

/** The `now-playing` feed row's entry: one row per station. */
export const NOW_PLAYING_ENTRY = 'current';

type StationView = Pick<Station, 'id' | 'timezone' | 'nowPlayingFreshnessSeconds'>;

/**
 * The station's `now-playing` feed row showing `shown` (its latest observation; null before the first)
 * as of `now`: the now-playing response. Every writer of the row builds it here — the ingest in its
 * own statement (commands.ts), the rewrites below with `upsertFeedRow`.
 */
export function nowPlayingRow(station: StationView, shown: TrackRow | null, now: Date): FeedRowInput {
  return { stationId: station.id, kind: 'now-playing', entry: NOW_PLAYING_ENTRY, data: presentNowPlaying(station, shown, now) };
}

/**
 * Rewrites the station's `now-playing` feed row from its latest observation (read here unless the
 * caller already knows it), inside the writing transaction; the row goes out on the bus after commit.
 * Same shape as the now-playing response.
 */
export async function upsertNowPlayingRow(
  tx: Tx,
  svc: Pick<Services, 'bus' | 'clock' | 'webhooks' | 'jobs' | 'logger'>,
  station: StationView,
  known?: TrackRow | null,
): Promise<void> {
  const now = svc.clock.now();
  const latest = known === undefined ? await latestTrack(tx.trx, station.id) : known;
  const row = nowPlayingRow(station, latest, now);
  await upsertFeedRow(tx, svc.bus, { ...row, now });
  emitAfterCommit(tx, svc, station.id, 'now-playing.changed', row.data);
}
