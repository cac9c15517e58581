import { Representation } from '../../lib/readCache.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { listenerTime, streamOf } from '../stations/streams.ts';
import { broadcastHeard } from '../schedule/reads.ts';
import { onAirOf } from '../schedule/onair.ts';
import { presentBroadcast } from '../schedule/presenter.ts';
import type { UpNext } from '../schedule/schemas.ts';
import { nowPlayingHeard } from './reads.ts';
import type { Live } from './schemas.ts';

// `GET …/live` (decisions.md, "Up next and the live answer"): the broadcast, now-playing and up next in
// one answer, every part computed at the same instant — heard time with `stream` — so they never
// disagree. Cached as bytes like every read: exact until the first of the parts' own changes (an age
// tick, a broadcast boundary, a planned item boundary, a stored change becoming audible).

export async function liveRead(
  svc: Pick<Services, 'db' | 'clock' | 'config'>,
  station: Station,
  streamKey?: string,
): Promise<Representation> {
  const now = svc.clock.now();
  const time = listenerTime(streamOf(station, streamKey), now);
  const [playing, onAir] = await Promise.all([nowPlayingHeard(svc, station, time), broadcastHeard(svc, station, time)]);
  let upNext: UpNext | null = null;
  let boundary = Infinity;
  if (station.upNext.enabled) {
    upNext = [];
    if (onAir.current) {
      const position = await onAirOf(svc.db, station.id, onAir.current, time.at, { upNext: station.upNext, heard: time.stream !== null });
      upNext = position.onAir.upNext ?? [];
      boundary = position.nextBoundary + time.shiftMs;
    }
  }
  const { track, elapsedSeconds, endsAt, freshness } = playing.body;
  const body: Live = {
    contractVersion: playing.body.contractVersion,
    stationId: station.id,
    timezone: station.timezone,
    asOf: now.toISOString(),
    stream: time.stream,
    broadcast: onAir.current ? presentBroadcast(onAir.current, station.timezone, time.at, svc.config.publicBaseUrl) : null,
    nowPlaying: { track, elapsedSeconds, endsAt, freshness },
    upNext,
  };
  // `asOf` aside, an answer recomputed only because its safety age ran out keeps its ETag (lib/readCache.ts).
  return Representation.json(body, Math.min(playing.validUntil, onAir.validUntil, boundary), JSON.stringify({ ...body, asOf: null }));
}
