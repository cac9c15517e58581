import { sign, verify } from '../../lib/tokens.ts';

// A preview grant is an HMAC-signed statement "this station's record may be previewed until T",
// valid 15 minutes. Nothing is stored: the signature is the proof. Grants are never logged.

export const GRANT_LIFETIME_MS = 15 * 60 * 1000;
const PREFIX = 'wpg_';

interface GrantPayload {
  s: string; // station id
  r: string; // record id
  a: string | null; // audience
  e: number; // expiry, ms since epoch
}

export function issueGrant(
  secret: string,
  input: { stationId: string; recordId: string; audience: string | null; now: Date },
): { grant: string; expiresAt: string } {
  const expires = input.now.getTime() + GRANT_LIFETIME_MS;
  const payload: GrantPayload = { s: input.stationId, r: input.recordId, a: input.audience, e: expires };
  return { grant: PREFIX + sign(secret, payload), expiresAt: new Date(expires).toISOString() };
}

/** True when the grant is genuine, unexpired and for exactly this station and record. */
export function grantAllows(secret: string, grant: string | undefined, stationId: string, recordId: string, now: Date): boolean {
  if (!grant || !grant.startsWith(PREFIX)) return false;
  const payload = verify<GrantPayload>(secret, grant.slice(PREFIX.length));
  if (!payload || typeof payload.e !== 'number') return false;
  return payload.s === stationId && payload.r === recordId.toLowerCase() && payload.e > now.getTime();
}
