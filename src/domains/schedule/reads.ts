import { Representation } from '../../lib/readCache.ts';
import type { Services, WebServices } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { MAX_BROADCASTS, type ResolvedBroadcast } from './model.ts';
import { broadcastOnAir, broadcastsOverlapping, nextBroadcastStart, programsWithBroadcasts } from './queries.ts';
import { presentCurrentBroadcast, presentPrograms, presentSchedule } from './presenter.ts';
import { buildCalendar, ICS_CONTENT_TYPE } from './ics.ts';
import { nextLocalMidnight, resolveWindow } from './window.ts';
import type { WindowQuery } from './schemas.ts';
import { listenerTime, streamOf, streamPart, type ListenerTime } from '../stations/streams.ts';

// The schedule's listener reads as cached answers (REST and GraphQL share them): each answer says
// until when its bytes stay exact — the window of a default `fromDate` is "today" until local
// midnight (Luxon, so a DST day is as long as it is locally), a broadcast's `status` changes at its
// start and end, the broadcast on air at the end of the current one or the next start.

type ReadServices = Pick<Services, 'db' | 'clock' | 'config'>;

/** The first start or end after `now` among the listed (non-cancelled) broadcasts: their status changes then. */
function nextStatusChange(broadcasts: ResolvedBroadcast[], nowMs: number): number {
  let next = Infinity;
  for (const { row } of broadcasts) {
    if (row.cancelled) continue;
    const starts = row.starts_at.getTime();
    const ends = row.ends_at.getTime();
    if (starts > nowMs && starts < next) next = starts;
    else if (ends > nowMs && ends < next) next = ends;
  }
  return next;
}

/** Local midnight when the window follows "today", else never. */
function windowValidUntil(query: WindowQuery, station: Station, now: Date): number {
  return query.fromDate === undefined ? nextLocalMidnight(now, station.timezone).getTime() : Infinity;
}

export async function scheduleRead(svc: ReadServices, station: Station, query: WindowQuery): Promise<Representation> {
  const now = svc.clock.now();
  const window = resolveWindow(query, station.timezone, now);
  const { broadcasts, truncated } = await broadcastsOverlapping(svc.db, station.id, window.start, window.end, MAX_BROADCASTS);
  const validUntil = Math.min(windowValidUntil(query, station, now), nextStatusChange(broadcasts, now.getTime()));
  return Representation.json(presentSchedule(broadcasts, truncated, station.timezone, now, svc.config.publicBaseUrl), validUntil);
}

export async function programsRead(svc: ReadServices, station: Station, query: WindowQuery): Promise<Representation> {
  const now = svc.clock.now();
  const window = resolveWindow(query, station.timezone, now);
  const programs = await programsWithBroadcasts(svc.db, station.id, window.start, window.end);
  return Representation.json(
    presentPrograms(programs, window, station.timezone, svc.config.publicBaseUrl),
    windowValidUntil(query, station, now),
  );
}

/**
 * The broadcast on air at `time` (heard time on a stream) and until when that stays so, heard on the
 * stream's clock: its end or the next start, shifted by the latency.
 */
export async function broadcastHeard(
  svc: ReadServices,
  station: Station,
  time: ListenerTime,
): Promise<{ current: ResolvedBroadcast | null; validUntil: number }> {
  const [current, nextStart] = await Promise.all([
    broadcastOnAir(svc.db, station.id, time.at),
    nextBroadcastStart(svc.db, station.id, time.at),
  ]);
  const change = Math.min(current ? current.row.ends_at.getTime() : Infinity, nextStart ? nextStart.getTime() : Infinity);
  return { current, validUntil: change + time.shiftMs };
}

/**
 * `asOf` is when the answer was first computed (docs/schedule.md, "asOf"): kept, in every process, for as
 * long as the answer shows the same broadcast (lib/asOf.ts), so a poll with `If-None-Match` answers 304
 * until the broadcast on air changes or is edited. With `stream`, the broadcast current at that stream's
 * heard time.
 */
export async function currentBroadcastRead(
  svc: ReadServices & Pick<WebServices, 'asOf'>,
  station: Station,
  streamKey?: string,
): Promise<Representation> {
  const now = svc.clock.now();
  const time = listenerTime(streamOf(station, streamKey), now);
  const { current, validUntil } = await broadcastHeard(svc, station, time);
  const value = { ...presentCurrentBroadcast(current, station.timezone, time.at, now, svc.config.publicBaseUrl), ...streamPart(time) };
  const asOf = await svc.asOf.keep(
    `broadcast/current\n${station.id}\n${time.stream ?? ''}`,
    station.id,
    'schedule',
    JSON.stringify({ ...value, asOf: null }),
    now,
    validUntil,
  );
  return Representation.json({ ...value, asOf: asOf.toISOString() }, validUntil);
}

export async function calendarRead(svc: ReadServices, station: Station, query: WindowQuery): Promise<Representation> {
  const now = svc.clock.now();
  const window = resolveWindow(query, station.timezone, now);
  const { broadcasts } = await broadcastsOverlapping(svc.db, station.id, window.start, window.end, MAX_BROADCASTS);
  return new Representation(Buffer.from(buildCalendar(station, broadcasts)), ICS_CONTENT_TYPE, windowValidUntil(query, station, now));
}
