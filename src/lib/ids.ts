import { randomBytes, randomUUID } from 'node:crypto';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Station id: `st_` + 20 lowercase base32 characters. */
export function newStationId(): string {
  const bytes = randomBytes(20);
  let out = 'st_';
  for (const byte of bytes) out += BASE32[byte & 31];
  return out;
}

export const newId = (): string => randomUUID();

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const isUuid = (value: string): boolean => new RegExp(UUID_PATTERN).test(value);

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request's id: the client's `X-Request-Id` when it is a sane token, else a new one (web and gateway). */
export function requestIdFrom(incoming: string | undefined): string {
  return incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : newRequestId();
}

// The ids the service makes are UUID-shaped (version 4, RFC 9562 variant): the first 74 random bits are
// drawn once per process (and again after 2^48 ids), the last 48 bits count. An id needs to be unique,
// not unpredictable: this costs a counter and a string, where randomUUID() per request cost 0.24 µs here
// (its randomness is refilled every 128 calls), a fiftieth of a cached listener read
// (docs/benchmarks.md#where-the-rest-goes).
const COUNTED = 2 ** 48;
let requestIdPrefix = randomUUID().slice(0, 24);
let requestIdCount = 0;

/** A new request id: unique across processes and restarts (74 random bits per process), UUID-shaped. */
export function newRequestId(): string {
  if (requestIdCount === COUNTED) {
    requestIdPrefix = randomUUID().slice(0, 24);
    requestIdCount = 0;
  }
  return requestIdPrefix + (requestIdCount++).toString(16).padStart(12, '0');
}
