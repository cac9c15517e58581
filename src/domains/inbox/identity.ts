import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { forwardedClient } from '../../lib/clientIp.ts';

// Privacy by construction (docs/inbox.md, "Privacy"): a listener's clientId and address are kept only as
// HMACs with WAVELINE_SECRET, per station (so two stations' data cannot be joined on them), and
// operators see a pseudonym derived from the client's HMAC. Nothing here is ever logged or answered.

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** The pseudonym's length in base32 characters (50 bits of the client's HMAC). */
export const PSEUDONYM_LENGTH = 10;
export const PSEUDONYM_PATTERN = `^[a-z2-7]{${PSEUDONYM_LENGTH}}$`;

export interface ClientIdentity {
  /** Hex HMAC of the clientId: what rows store and compare. */
  clientHash: string;
  /** What operators see. */
  client: string;
}

// The secret as a key object, made once: an HMAC keyed with a string imports the key on every call
// (a vote computes one per request).
let key: { secret: string; object: KeyObject } | null = null;
const keyOf = (secret: string): KeyObject => {
  if (key?.secret !== secret) key = { secret, object: createSecretKey(Buffer.from(secret, 'utf8')) };
  return key.object;
};

const hmac = (secret: string, what: string, stationId: string, value: string): Buffer =>
  createHmac('sha256', keyOf(secret)).update(`waveline.inbox.${what}\u0000${stationId}\u0000${value}`).digest();

function base32(bytes: Buffer, length: number): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length === length) break;
  }
  return out;
}

/** The client's HMAC and pseudonym; the UUID's case does not matter. */
export function clientIdentity(secret: string, stationId: string, clientId: string): ClientIdentity {
  const digest = hmac(secret, 'client', stationId, clientId.toLowerCase());
  return { clientHash: digest.toString('hex'), client: pseudonymOf(digest) };
}

/** The pseudonym of a client's HMAC (its first 50 bits in base32). */
export const pseudonymOf = (digest: Buffer): string => base32(digest, PSEUDONYM_LENGTH);

/** The HMAC of the address a request came from. */
export const addressHash = (secret: string, stationId: string, address: string): string =>
  hmac(secret, 'address', stationId, address).toString('hex');

/**
 * The client's address behind the trusted proxies (lib/clientIp.ts: the X-Forwarded-For entry the nearest
 * trusted proxy wrote), else the socket's.
 */
export function clientAddress(req: IncomingMessage, trustedProxyHops: number): string {
  const header = req.headers['x-forwarded-for'];
  return forwardedClient(Array.isArray(header) ? header.join(',') : header, trustedProxyHops) ?? req.socket.remoteAddress ?? '';
}
