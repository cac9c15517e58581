import { createHash, createHmac, hash, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

// Raw credential: `wvl_` + 40 base62 characters of randomness + 6 base62 characters of checksum
// (CRC32 of the 40 random characters), so a scanner or the auth gate can reject a typo offline.

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const TOKEN_PREFIX = 'wvl_';
const TOKEN_PATTERN = /^wvl_[0-9A-Za-z]{46}$/;
/** Every well-formed token has this length (`wvl_` + 40 + 6). */
export const TOKEN_LENGTH = 50;

export function toBase62(value: number, width: number): string {
  let out = '';
  let n = value;
  do {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  } while (n > 0);
  return out.padStart(width, '0');
}

export function checksum(random: string): string {
  return toBase62(crc32(random), 6);
}

function randomBase62(length: number): string {
  let random = '';
  for (let i = 0; i < length; i++) random += ALPHABET[randomInt(62)];
  return random;
}

export function generateToken(): string {
  const random = randomBase62(40);
  return TOKEN_PREFIX + random + checksum(random);
}

// Operator keys (docs/operations.md#operator-keys-and-the-audit-log): `wvo_` + 40 base62 characters,
// literally — no checksum suffix; hashed and compared like listener tokens.
export const OPERATOR_KEY_PREFIX = 'wvo_';
const OPERATOR_KEY_PATTERN = /^wvo_[0-9A-Za-z]{40}$/;

export const generateOperatorKey = (): string => OPERATOR_KEY_PREFIX + randomBase62(40);

/** True when the value has the operator-key shape (what is worth a look-up at all). */
export const isOperatorKeyShaped = (value: string): boolean => OPERATOR_KEY_PATTERN.test(value);

/** True when the token has the product shape and its checksum holds. No database involved. */
export function isWellFormedToken(token: string): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  // The checksum is no secret (anyone can compute it), so a plain comparison is fine here.
  return checksum(token.slice(4, 44)) === token.slice(44);
}

/** SHA-256 of a token, hex: what the credentials table stores. One-shot `hash()` (no Hash object per call). */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    // Compare anyway so timing does not reveal the length mismatch early.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** Signs an opaque value (cursor, preview grant) with WAVELINE_SECRET: `base64url(payload).sig`. */
export function sign(secret: string, payload: unknown): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const mac = createHmac('sha256', secret).update(body).digest('base64url').slice(0, 22);
  return `${body}.${mac}`;
}

/** Returns the signed payload, or null when the value was tampered with or is malformed. */
export function verify<T = unknown>(secret: string, value: string): T | null {
  const dot = value.lastIndexOf('.');
  if (dot <= 0) return null;
  const body = value.slice(0, dot);
  const mac = createHmac('sha256', secret).update(body).digest('base64url').slice(0, 22);
  if (!safeEqual(mac, value.slice(dot + 1))) return null;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
  } catch {
    return null;
  }
}
