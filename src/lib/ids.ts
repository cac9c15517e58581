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

/** A request's id: the client's `X-Request-Id` when it is a sane token, else a new UUID (web and gateway). */
export function requestIdFrom(incoming: string | undefined): string {
  return incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
