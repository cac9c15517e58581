import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { admin, request, type Reply } from '../../support/http.ts';
import { createStation, createToken, type TestStation } from '../../support/factories.ts';
import { ingest } from '../../support/ingest.ts';
import type { ManualClock } from '../../../src/lib/clock.ts';

// The listener inbox's test fixtures (docs/inbox.md): a station with the module on, an app credential
// with inbox:write, an encoder's credential to put plays on air, and the studio's calls.

export interface InboxFixture {
  station: TestStation;
  token: string;
  ingestToken: string;
  /** POST …/inbox/messages; `address` is the client address (X-Forwarded-For, one trusted hop by default). */
  send(body: Record<string, unknown>, options?: { address?: string; token?: string }): Promise<Reply>;
  /** A message from a fresh client unless `clientId` says otherwise. */
  message(text: string, extra?: Record<string, unknown>, options?: { address?: string }): Promise<Reply>;
  request(artist: string, title: string, extra?: Record<string, unknown>, options?: { address?: string }): Promise<Reply>;
  like(clientId: string, value: number): Promise<Reply>;
  requestable(query: string): Promise<Reply>;
  /** Reports a play (with its own event id, so nothing collapses) at the clock's now unless `at` says otherwise. */
  play(artist: string | null, title: string, extra?: Record<string, unknown>): Promise<void>;
  /** The studio list (root key), newest first. */
  list(query?: string): Promise<any[]>;
  settings(inbox: Record<string, unknown>): Promise<void>;
}

export async function inboxFixture(
  baseUrl: string,
  clock: ManualClock | null,
  overrides: Record<string, unknown> = {},
): Promise<InboxFixture> {
  const { inbox, ...rest } = overrides;
  const station = await createStation(baseUrl, { modules: { inbox: true }, rundownFollowing: false, ...(inbox ? { inbox } : {}), ...rest });
  const { token } = await createToken(baseUrl, station.id, ['inbox:write']);
  const { token: ingestToken } = await createToken(baseUrl, station.id, ['ingest:write']);
  const base = `/api/v1/stations/${station.slug}/inbox`;
  const send = (body: Record<string, unknown>, options: { address?: string; token?: string } = {}) =>
    request(baseUrl, 'POST', `${base}/messages`, {
      token: options.token ?? token,
      json: body,
      headers: options.address ? { 'x-forwarded-for': options.address } : {},
    });
  return {
    station,
    token,
    ingestToken,
    send,
    message: (text, extra = {}, options = {}) => send({ clientId: randomUUID(), kind: 'message', text, ...extra }, options),
    request: (artist, title, extra = {}, options = {}) =>
      send({ clientId: randomUUID(), kind: 'request', track: { artist, title }, ...extra }, options),
    like: (clientId, value) => request(baseUrl, 'PUT', `${base}/likes`, { token, json: { clientId, value } }),
    requestable: (query) => request(baseUrl, 'GET', `${base}/requestable?${query}`, { token }),
    async play(artist, title, extra = {}) {
      const at = clock ? clock.nowMs() : Date.now();
      const res = await ingest(baseUrl, station, ingestToken, {
        eventId: randomUUID(),
        observedAt: at,
        ...(artist === null ? {} : { artist }),
        title,
        isPlaying: true,
        ...extra,
      });
      expect(res.status, res.text).to.equal(200);
    },
    async list(query = '') {
      const res = await admin(baseUrl, 'GET', `/stations/${station.id}/inbox/messages${query ? `?${query}` : ''}`);
      expect(res.status, res.text).to.equal(200);
      return res.body.messages;
    },
    async settings(settings) {
      const res = await admin(baseUrl, 'PATCH', `/stations/${station.id}`, { inbox: settings });
      expect(res.status, res.text).to.equal(200);
    },
  };
}

/** An operator key with these scopes on these stations (root key call). */
export async function operatorKey(baseUrl: string, stations: string[] | '*', scopes: string[]): Promise<string> {
  const res = await admin(baseUrl, 'POST', '/operator-keys', { label: 'studio', stations, scopes });
  expect(res.status, res.text).to.equal(201);
  return res.body.key;
}
