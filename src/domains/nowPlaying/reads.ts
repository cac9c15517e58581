import { ValidationError } from '../../lib/errors.ts';
import { nextAgeTick } from '../../lib/freshness.ts';
import { Representation } from '../../lib/readCache.ts';
import { momentOf } from './model.ts';
import { sha256Hex, sign, verify } from '../../lib/tokens.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { presentHistoryItem, presentNowPlaying } from './presenter.ts';
import { historyRows, latestTrack, type HistoryFilters, type HistoryPosition } from './queries.ts';
import type { TrackHistory, TrackHistoryQuery } from './schemas.ts';

// The two listener reads, shared by REST and GraphQL.

/** Now-playing as a cached answer: exact until its age (and elapsed time) moves to the next whole second. */
export async function nowPlayingRead(svc: Pick<Services, 'db' | 'clock'>, station: Station): Promise<Representation> {
  const now = svc.clock.now();
  const latest = await latestTrack(svc.db, station.id);
  const validUntil = latest ? nextAgeTick(momentOf(latest).getTime(), now.getTime()) : Infinity;
  return Representation.json(presentNowPlaying(station, latest, now), validUntil);
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

/** One page of track history: playing observations, newest first; `limit` 1..100, default 25; optional from/to/broadcastId filters. */
export async function trackHistoryPage(
  svc: Pick<Services, 'db' | 'config'>,
  station: Station,
  query: TrackHistoryQuery,
): Promise<TrackHistory> {
  const limit = query.limit ?? 25;
  const { filters, binding } = filtersOf(query);
  const after = readCursor(svc.config.secret, query.cursor, station.id, binding);
  const rows = await historyRows(svc.db, station.id, limit, after, filters);
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
  return { contractVersion: 1, items: page.map(presentHistoryItem), nextCursor };
}
