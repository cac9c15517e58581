import { ValidationError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { sha256Hex, sign, verify } from '../../lib/tokens.ts';
import type { ContentFilter } from './filters.ts';
import { canonicalFilters } from './filters.ts';
import type { Direction, Sort } from './schemas.ts';

// Keyset cursors: the (sort value, record id) of the last record of a page, signed with
// WAVELINE_SECRET and bound to the listing that produced them (station, type, filters, sort,
// direction) through a short hash. Never an offset, so publishing during a walk cannot shift pages.

export interface Listing {
  stationId: string;
  type: string;
  filters: ContentFilter[];
  sort: Sort;
  direction: Direction;
}

export interface CursorKey {
  at: Date;
  id: string;
}

interface Payload {
  b: string; // binding hash of the listing
  a: number; // sort value, epoch milliseconds
  i: string; // record id
}

function binding(listing: Listing): string {
  const parts = [listing.stationId, listing.type, canonicalFilters(listing.filters), listing.sort, listing.direction];
  return Buffer.from(sha256Hex(JSON.stringify(parts)), 'hex').subarray(0, 12).toString('base64url');
}

export function encodeCursor(secret: string, listing: Listing, key: CursorKey): string {
  return sign(secret, { b: binding(listing), a: key.at.getTime(), i: key.id } satisfies Payload);
}

const invalid = (message: string) => new ValidationError('Invalid cursor.', [{ path: 'cursor', code: 'invalid_cursor', message }]);

/** The position a cursor encodes; 400 when it was tampered with or belongs to another listing. */
export function decodeCursor(secret: string, listing: Listing, cursor: string): CursorKey {
  const payload = verify<Payload>(secret, cursor);
  if (!payload || typeof payload !== 'object' || typeof payload.b !== 'string' || !Number.isSafeInteger(payload.a) || typeof payload.i !== 'string' || !isUuid(payload.i)) {
    throw invalid('cursor is not a cursor this service issued; pass nextCursor back unchanged');
  }
  if (payload.b !== binding(listing)) {
    throw invalid('cursor was issued for another type, filter set, sort or direction; use it only with the parameters that produced it');
  }
  return { at: new Date(payload.a), id: payload.i };
}
