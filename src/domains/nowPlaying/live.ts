import { Representation } from '../../lib/readCache.ts';
import type { Services, WebServices } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { listenerTime, streamOf } from '../stations/streams.ts';
import { broadcastHeard } from '../schedule/reads.ts';
import { onAirOf } from '../schedule/onair.ts';
import { presentBroadcast } from '../schedule/presenter.ts';
import type { UpNext } from '../schedule/schemas.ts';
import { nowPlayingHeard } from './reads.ts';
import type { Live } from './schemas.ts';

// `GET …/live` (docs/now-playing.md#the-live-answer-get-livestreamkey): the broadcast, now-playing and up next in
// one answer, every part computed at the same instant — heard time with `stream` — so they never
// disagree. Cached as bytes like every read: exact until the first of the parts' own changes (an age
// tick, a broadcast boundary, a planned item boundary, a stored change becoming audible).

export async function liveRead(
  svc: Pick<Services, 'db' | 'clock' | 'config'> & Pick<WebServices, 'asOf'>,
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
  // `asOf`: when the same answer was first computed (lib/asOf.ts) — the time of this computation while a
  // track plays, since its elapsed time changes the answer each second anyway.
  const validUntil = Math.min(playing.validUntil, onAir.validUntil, boundary);
  const key = `live\n${station.id}\n${time.stream ?? ''}`;
  const asOf = await svc.asOf.keep(key, station.id, ['nowPlaying', 'schedule'], JSON.stringify({ ...body, asOf: null }), now, validUntil);
  return Representation.json({ ...body, asOf: asOf.toISOString() }, validUntil);
}
