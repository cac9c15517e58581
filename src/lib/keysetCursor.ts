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
