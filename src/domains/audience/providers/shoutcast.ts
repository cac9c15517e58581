import { CountUnavailable } from './http.ts';

// SHOUTcast DNAS v2 `/stats?sid=N&json=1`: one stream's statistics; `currentlisteners` is the count now
// (`uniquelisteners` would collapse listeners behind one address, which a census does not do).

export function shoutcastListeners(doc: unknown): number {
  const n = (doc as { currentlisteners?: unknown } | null)?.currentlisteners;
  if (n === undefined) throw new CountUnavailable('the answer has no currentlisteners: not a SHOUTcast v2 stats document (add json=1)');
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new CountUnavailable('currentlisteners is not a whole number');
  return n;
}
