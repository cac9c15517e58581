import { ValidationError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { sha256Hex, sign, verify } from '../../lib/tokens.ts';
import type { ContentFilter } from './filters.ts';
import { canonicalFilters } from './filters.ts';
import type { Direction, Sort } from './schemas.ts';

// Keyset cursors: the (sort value, record id) of the last record of a page and the walk's snapshot
// (`asOf`, the type's position clock when the first page was read), signed with WAVELINE_SECRET and
// bound to the listing that produced them (station, type, filters, sort, direction) through a short
// hash. Never an offset; later pages order records by the positions they held at `asOf`, so neither
// new publications nor republications shift a walk (positions.ts).

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
  /** content_types.position_seq when the walk's first page was read. */
  asOf: number;
}

interface Payload {
  b: string; // binding hash of the listing
  a: number; // sort value, epoch milliseconds
  i: string; // record id
  s: number; // asOf
}

function binding(listing: Listing): string {
  const parts = [listing.stationId, listing.type, canonicalFilters(listing.filters), listing.sort, listing.direction];
  return Buffer.from(sha256Hex(JSON.stringify(parts)), 'hex')
    .subarray(0, 12)
    .toString('base64url');
}

export function encodeCursor(secret: string, listing: Listing, key: CursorKey): string {
  return sign(secret, { b: binding(listing), a: key.at.getTime(), i: key.id, s: key.asOf } satisfies Payload);
}

const invalid = (message: string) => new ValidationError('Invalid cursor.', [{ path: 'cursor', code: 'invalid_cursor', message }]);

const wellFormed = (p: Payload | null): p is Payload =>
  !!p &&
  typeof p === 'object' &&
  typeof p.b === 'string' &&
  Number.isSafeInteger(p.a) &&
  typeof p.i === 'string' &&
  isUuid(p.i) &&
  Number.isSafeInteger(p.s) &&
  p.s >= 0;

/** The position a cursor encodes; 400 when it was tampered with or belongs to another listing. */
export function decodeCursor(secret: string, listing: Listing, cursor: string): CursorKey {
  const payload = verify<Payload>(secret, cursor);
  if (!wellFormed(payload)) {
    throw invalid('cursor is not a cursor this service issued; pass nextCursor back unchanged');
  }
  if (payload.b !== binding(listing)) {
    throw invalid('cursor was issued for another type, filter set, sort or direction; use it only with the parameters that produced it');
  }
  return { at: new Date(payload.a), id: payload.i, asOf: payload.s };
}
