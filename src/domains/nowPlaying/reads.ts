import { ValidationError } from '../../lib/errors.ts';
import { nextAgeTick } from '../../lib/freshness.ts';
import { Representation } from '../../lib/readCache.ts';
import { momentOf } from './model.ts';
import { sha256Hex, sign, verify } from '../../lib/tokens.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { nowPlayingAt, presentHistoryItem, presentNowPlaying } from './presenter.ts';
import { historyRows, latestTrack, nextPlayAfter, type HistoryFilters, type HistoryPosition } from './queries.ts';
import type { NowPlaying, TrackHistory, TrackHistoryQuery } from './schemas.ts';
import { listenerTime, streamOf, streamPart, type ListenerTime } from '../stations/streams.ts';
import type { TrackRow } from './model.ts';

// The two listener reads, shared by REST and GraphQL. With `stream` they answer at that stream's heard
// time (docs/now-playing.md#heard-time-answers-in-the-listeners-time), and each answer is exact until the
// next stored change becomes audible there: its `validUntil` is that instant, so the cached bytes change
// exactly then, in every process, with no timer to clear and no query per request (docs/architecture.md,
// "Listener read cache").

type ReadServices = Pick<Services, 'db' | 'clock'>;

/** Until when a now-playing answer at `time` is exact: its next age tick, heard on the stream's clock. */
export function nowPlayingValidUntil(latest: TrackRow | null, time: ListenerTime): number {
  return latest ? nextAgeTick(momentOf(latest).getTime(), time.at.getTime()) + time.shiftMs : Infinity;
}

/** The latest observation at `time` and, for a stream, when the next stored one becomes audible there. */
export async function nowPlayingHeard(
  svc: ReadServices,
  station: Station,
  time: ListenerTime,
): Promise<{ body: NowPlaying; validUntil: number; audible: number; latest: TrackRow | null }> {
  const heardAt = time.stream ? time.at : undefined;
  const [latest, next] = await Promise.all([
    latestTrack(svc.db, station.id, heardAt),
    // Without a stream a new observation is audible as it arrives: its ingest drops the answer.
    heardAt ? nextPlayAfter(svc.db, station.id, heardAt) : null,
  ]);
  const audible = next ? next.getTime() + time.shiftMs : Infinity;
  return {
    body: presentNowPlaying(station, latest, time.at, time.shiftMs),
    validUntil: Math.min(nowPlayingValidUntil(latest, time), audible),
    audible,
    latest,
  };
}

/**
 * Now-playing as a cached answer: exact until its age (and elapsed time) moves to the next whole second,
 * or a change becomes audible. Until then only time moves it: at each age tick the cache derives the
 * next answer from the same observation (`Representation.later`) instead of reading it again, so a
 * station's now-playing costs one query per change, not one a second (docs/architecture.md, "Listener
 * read cache"). A stored observation drops it (its ingest invalidates the area); one stored earlier
 * that becomes audible on the stream ends it (`audible`).
 */
export async function nowPlayingRead(svc: ReadServices, station: Station, streamKey?: string): Promise<Representation> {
  const stream = streamOf(station, streamKey);
  const time = listenerTime(stream, svc.clock.now());
  const { body, validUntil, audible, latest } = await nowPlayingHeard(svc, station, time);
  const answer = (at: ListenerTime, shown: NowPlaying, until: number): Representation => {
    const rep = Representation.json({ ...shown, ...streamPart(at) }, until).derivesLater((nowMs) => {
      if (nowMs >= audible) return undefined;
      const later = listenerTime(stream, new Date(nowMs));
      return answer(
        later,
        presentNowPlaying(station, latest, later.at, later.shiftMs),
        Math.min(nowPlayingValidUntil(latest, later), audible),
      );
    });
    return latest ? rep.at(observationVersion(latest)) : rep;
  };
  return answer(time, body, validUntil);
}

/**
 * Where an observation stands in its station's order — what "latest" means: play time (`sort_at`), then
 * receipt (docs/now-playing.md#the-now-playing-and-track-history-answers). A cached answer's
 * `Representation.version`.
 */
export const observationVersion = (row: Pick<TrackRow, 'sort_at' | 'receipt_seq'>): number[] => [
  row.sort_at.getTime(),
  Number(row.receipt_seq),
];

/**
 * What an ingest that changed the now-playing row sends with its invalidation: the row's answer as
 * stored and the observation's version. Every web process answers now-playing (without a stream) from
 * it at once, while reading it again (`nowPlayingSeeded`).
 */
export const nowPlayingSeed = (shown: NowPlaying, row: Pick<TrackRow, 'sort_at' | 'receipt_seq'>): string =>
  JSON.stringify({ v: observationVersion(row), np: shown });

/**
 * The now-playing answer (without a stream) from a seed `nowPlayingSeed` made: the stored answer at the
 * current instant (`nowPlayingAt`), the same bytes a read of the observation gives; undefined for a seed
 * that is not this station's or not one.
 */
export function nowPlayingSeeded(svc: Pick<Services, 'clock'>, station: Station, seed: string): Representation | undefined {
  let parsed: { v?: unknown; np?: NowPlaying };
  try {
    parsed = JSON.parse(seed) as typeof parsed;
  } catch {
    return undefined;
  }
  const { v, np } = parsed;
  if (!Array.isArray(v) || !v.every((n) => typeof n === 'number') || np?.stationId !== station.id || !np.freshness) return undefined;
  const version = v as number[];
  const moment = np.freshness.observedAt ?? np.freshness.receivedAt;
  const momentMs = moment === null ? NaN : Date.parse(moment);
  const answer = (nowMs: number): Representation =>
    Representation.json(nowPlayingAt(np, new Date(nowMs)), Number.isNaN(momentMs) ? Infinity : nextAgeTick(momentMs, nowMs))
      .derivesLater(answer)
      .at(version);
  return answer(svc.clock.now().getTime());
}

interface CursorPayload extends HistoryPosition {
  st: string;
  /** Binding hash of the filters (absent without filters, as in cursors issued before there were any). */
  f?: string;
}

/** The filters of a query, and a short hash a cursor carries so it is only used with the same filters. */
function filtersOf(query: TrackHistoryQuery): { filters: HistoryFilters; binding: string | undefined } {
  const filters: HistoryFilters = {
    ...(query.from !== undefined ? { from: new Date(query.from) } : {}),
    ...(query.to !== undefined ? { to: new Date(query.to) } : {}),
    ...(query.broadcastId !== undefined ? { broadcastId: query.broadcastId.toLowerCase() } : {}),
  };
  if (filters.from && filters.to && filters.to <= filters.from) {
    throw new ValidationError('Invalid query parameters.', [{ path: 'to', code: 'invalid_value', message: 'to must be after from' }]);
  }
  if (!filters.from && !filters.to && !filters.broadcastId) return { filters, binding: undefined };
  const parts = [filters.from?.getTime() ?? null, filters.to?.getTime() ?? null, filters.broadcastId ?? null];
  // The stream is not bound: pages of two streams differ only in their newest items, never in a cursor's position.
  return {
    filters,
    binding: Buffer.from(sha256Hex(JSON.stringify(parts)), 'hex')
      .subarray(0, 12)
      .toString('base64url'),
  };
}

/** A cursor is signed with WAVELINE_SECRET and bound to its station and filters; anything else is 400. */
function readCursor(secret: string, cursor: string | undefined, stationId: string, binding: string | undefined): HistoryPosition | null {
  if (cursor === undefined) return null;
  const payload = verify<CursorPayload>(secret, cursor);
  if (
    !payload ||
    payload.st !== stationId ||
    typeof payload.sortAt !== 'string' ||
    Number.isNaN(Date.parse(payload.sortAt)) ||
    !Number.isSafeInteger(payload.seq)
  ) {
    throw new ValidationError('Invalid cursor.', [
      {
        path: 'cursor',
        code: 'invalid_cursor',
        message: 'cursor must be a nextCursor of this station’s track history, passed back unchanged',
      },
    ]);
  }
  if (payload.f !== binding) {
    throw new ValidationError('Invalid cursor.', [
      {
        path: 'cursor',
        code: 'invalid_cursor',
        message: 'cursor was issued for other from/to/broadcastId filters; use it only with the parameters that produced it',
      },
    ]);
  }
  return { sortAt: payload.sortAt, seq: payload.seq };
}

/**
 * One page of track history: playing observations, newest first; `limit` 1..100, default 25; optional
 * from/to/broadcastId filters. With `stream`, only items already audible there; exact until the next
 * stored one becomes audible.
 */
export async function trackHistoryPage(
  svc: Pick<Services, 'db' | 'config' | 'clock'>,
  station: Station,
  query: TrackHistoryQuery,
): Promise<Representation> {
  const limit = query.limit ?? 25;
  const time = listenerTime(streamOf(station, query.stream), svc.clock.now());
  const { filters, binding } = filtersOf(query);
  const after = readCursor(svc.config.secret, query.cursor, station.id, binding);
  if (time.stream) filters.heardAt = time.at;
  const [rows, next] = await Promise.all([
    historyRows(svc.db, station.id, limit, after, filters),
    time.stream ? nextPlayAfter(svc.db, station.id, time.at, true) : null,
  ]);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > limit && last
      ? sign(svc.config.secret, {
          st: station.id,
          sortAt: last.sort_at.toISOString(),
          seq: Number(last.receipt_seq),
          ...(binding ? { f: binding } : {}),
        } satisfies CursorPayload)
      : null;
  const body: TrackHistory = { contractVersion: 1, items: page.map(presentHistoryItem), nextCursor, ...streamPart(time) };
  return Representation.json(body, next ? next.getTime() + time.shiftMs : Infinity);
}
