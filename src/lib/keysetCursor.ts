import type { Knex } from 'knex';
import { ValidationError } from './errors.ts';
import { isUuid } from './ids.ts';
import { sign, verify } from './tokens.ts';

// Signed keyset cursors for newest-first lists ordered by (created_at, id) — a station's push
// notifications, a webhook's deliveries: the last row's position, bound to the list's owner (`bind`, e.g.
// `{s: stationId}`), so a cursor of another list or a tampered one is a 400, never another list's page.

/** The `nextCursor` after `row`. */
export function keysetCursor(secret: string, bind: Readonly<Record<string, string>>, row: { created_at: Date; id: string }): string {
  return sign(secret, { ...bind, a: row.created_at.getTime(), i: row.id });
}

/** The position a cursor names: rows strictly before it come next. `what` names the list in the error. */
export function readKeysetCursor(
  secret: string,
  cursor: string,
  bind: Readonly<Record<string, string>>,
  what: string,
): { createdAt: Date; id: string } {
  const payload = verify<Record<string, unknown>>(secret, cursor);
  const bound = payload !== null && typeof payload === 'object' && Object.entries(bind).every(([key, value]) => payload[key] === value);
  if (!bound || !Number.isSafeInteger(payload.a) || typeof payload.i !== 'string' || !isUuid(payload.i)) {
    throw new ValidationError('Invalid cursor.', [
      { path: 'cursor', code: 'invalid_cursor', message: `cursor must be a nextCursor of ${what}, passed back unchanged` },
    ]);
  }
  return { createdAt: new Date(payload.a as number), id: payload.i };
}

/**
 * One newest-first page of `rows` (a query of the list's rows, filtered to its owner): at most `limit`
 * (default 25) after the position `cursor` names, and the `nextCursor` after the last when more follow.
 */
export async function keysetPage<Row extends { created_at: Date; id: string }>(
  rows: Knex.QueryBuilder,
  secret: string,
  bind: Readonly<Record<string, string>>,
  what: string,
  query: { limit?: number; cursor?: string },
): Promise<{ page: Row[]; nextCursor: string | null }> {
  const limit = query.limit ?? 25;
  const after = query.cursor ? readKeysetCursor(secret, query.cursor, bind, what) : null;
  rows
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit + 1);
  if (after) rows.andWhereRaw('(created_at, id) < (?::timestamptz, ?::uuid)', [after.createdAt, after.id]);
  const found: Row[] = await rows;
  const page = found.slice(0, limit);
  const last = page[page.length - 1];
  return { page, nextCursor: found.length > limit && last ? keysetCursor(secret, bind, last) : null };
}
