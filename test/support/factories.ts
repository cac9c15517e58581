import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { admin } from './http.ts';

let counter = 0;

/** A unique slug per call, so tests never share stations. */
export const uniqueSlug = (prefix = 'st'): string =>
  `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${randomBytes(2).toString('hex')}`;

export interface TestStation {
  id: string;
  slug: string;
  timezone: string;
  [key: string]: unknown;
}

/** Creates a station through the admin API. */
export async function createStation(baseUrl: string, overrides: Record<string, unknown> = {}): Promise<TestStation> {
  const res = await admin(baseUrl, 'POST', '/stations', { slug: uniqueSlug(), name: 'Test FM', timezone: 'Europe/Berlin', ...overrides });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body as TestStation;
}

/** Creates a credential through the admin API and returns its raw token. */
export async function createToken(
  baseUrl: string,
  stationId: string,
  scopes: string[] = ['listener:read'],
  extra: Record<string, unknown> = {},
): Promise<{ id: string; token: string }> {
  const res = await admin(baseUrl, 'POST', `/stations/${stationId}/credentials`, { scopes, ...extra });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return { id: res.body.id, token: res.body.token };
}

/** A station with a listener credential: the start of most listener tests. */
export async function listenerFixture(baseUrl: string, overrides: Record<string, unknown> = {}) {
  const station = await createStation(baseUrl, overrides);
  const { token, id: credentialId } = await createToken(baseUrl, station.id, ['listener:read']);
  return { station, token, credentialId };
}

/** Polls `check` until it returns a truthy value or the deadline passes (never sleep-and-hope). */
export async function eventually<T>(check: () => Promise<T> | T, { timeoutMs = 5000, intervalMs = 20 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw last instanceof Error ? last : new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
