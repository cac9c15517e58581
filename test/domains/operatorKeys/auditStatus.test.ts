import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { ADMIN_TOKEN } from '../../support/env.ts';
import { createStation } from '../../support/factories.ts';
import { allRoutes } from '../../../src/routes.ts';
import { png } from '../../support/imageServer.ts';
import { uploaded } from '../media/helpers.ts';

// docs/operations.md#the-audit-log: an audit entry's `status` is the status the client received (201,
// 202, 204 included), never a default. Each write below is answered, then its entry is read back through the
// audit read routes (GET …/stations/{id}/audit, GET /admin/v1/audit).

interface Exercised {
  action: string;
  status: number;
}

const WRITES = new Set(['post', 'put', 'patch', 'delete']);

/** Every admin write with the success statuses it documents. */
const documentedSuccesses = () =>
  allRoutes
    .filter((route) => route.surface === 'admin' && WRITES.has(route.method))
    .map((route) => ({
      action: route.access?.action as string,
      statuses: Object.keys(route.responses)
        .filter((status) => status.startsWith('2'))
        .map(Number),
    }));

describe('audit log: the entry’s status is the status the client received', () => {
  let server: TestServer;
  const exercised: Exercised[] = [];
  let lastEntry: { target: string | null } | undefined;
  before(async () => (server = await sharedServer()));

  async function entryOf(stationId: string | null, action: string, requestId: string) {
    const path = stationId ? `/stations/${stationId}/audit?action=${action}&limit=100` : `/audit?action=${action}&limit=100`;
    const read = await admin(server.url, 'GET', path);
    expect(read.status, JSON.stringify(read.body)).to.equal(200);
    return read.body.entries.find((entry: { requestId: string }) => entry.requestId === requestId);
  }

  /** A record of a `news` type, for the writes that need one (its id). */
  async function newsRecord(stationId: string): Promise<string> {
    const type = await admin(server.url, 'PUT', `/stations/${stationId}/content-types/news`, {
      label: 'News',
      fields: [{ key: 'title', label: 'Title', kind: 'text', required: true }],
    });
    expect(type.status).to.equal(200);
    const recordId = randomUUID();
    expect(
      (await admin(server.url, 'PUT', `/stations/${stationId}/records/${recordId}`, { type: 'news', values: { title: 't' } })).status,
    ).to.equal(200);
    return recordId;
  }

  /** Sends an admin write, expects `status`, then its audit entry (by request id) to say the same. */
  async function write(stationId: string | null, action: string, method: string, path: string, status: number, json?: unknown) {
    const requestId = `audit-status-${randomUUID()}`;
    const res = await request(server.url, method, `/admin/v1${path}`, { token: ADMIN_TOKEN, json, headers: { 'x-request-id': requestId } });
    expect(res.status, `${method} ${path}: ${res.text}`).to.equal(status);
    const entry = await entryOf(stationId, action, requestId);
    expect(entry, `the audit entry of ${method} ${path}`).to.not.equal(undefined);
    expect(entry, `${method} ${path}`).to.include({ action, method, status });
    exercised.push({ action, status });
    lastEntry = entry;
    return res.body;
  }

  it('201: creating a station, a credential, a rotation, a preview grant, a webhook and an operator key', async () => {
    const station = await write(null, 'station.create', 'POST', '/stations', 201, {
      slug: `audit-${randomUUID().slice(0, 8)}`,
      name: 'Audit FM',
      timezone: 'Europe/Berlin',
    });
    // The station's feature follow-ups (its feed rows, in transactions of their own) never take its entry.
    expect(lastEntry?.target, 'the created station').to.equal(station.id);
    const credential = await write(station.id, 'credential.create', 'POST', `/stations/${station.id}/credentials`, 201, {
      scopes: ['listener:read'],
    });
    await write(station.id, 'credential.rotate', 'POST', `/stations/${station.id}/credentials/${credential.id}/rotate`, 201);
    await write(station.id, 'webhook.create', 'POST', `/stations/${station.id}/webhooks`, 201, {
      url: 'https://example.org/hook',
      events: ['content.published'],
    });
    const key = await write(null, 'operator-key.create', 'POST', '/operator-keys', 201, {
      label: 'audit status',
      stations: [station.id],
      scopes: ['content:write'],
    });
    await write(null, 'operator-key.rotate', 'POST', `/operator-keys/${key.id}/rotate`, 201);

    const recordId = await newsRecord(station.id);
    await write(station.id, 'content.preview-grant', 'POST', `/stations/${station.id}/preview-grants`, 201, { recordId });
  });

  it('202: a push notification queued (and 200 for its idempotent replay), a webhook test delivery queued', async () => {
    const station = await createStation(server.url, { push: { provider: 'expo' } });
    expect((await admin(server.url, 'PUT', `/stations/${station.id}/push/credentials`, { provider: 'expo' })).status).to.equal(200);
    const notification = { topic: 'alerts', title: 'Storm', body: 'Stay inside', idempotencyKey: `k-${randomUUID()}` };
    await write(station.id, 'push.send', 'POST', `/stations/${station.id}/push/notifications`, 202, notification);
    await write(station.id, 'push.send', 'POST', `/stations/${station.id}/push/notifications`, 200, notification);

    const hook = await admin(server.url, 'POST', `/stations/${station.id}/webhooks`, {
      url: 'https://example.org/hook',
      events: ['content.published'],
    });
    expect(hook.status).to.equal(201);
    await write(station.id, 'webhook.test', 'POST', `/stations/${station.id}/webhooks/${hook.body.id}/test`, 202);
  });

  it('201 then 200: an artwork pin created, then replaced (PUT answers either)', async () => {
    const station = await createStation(server.url);
    const art = await uploaded(server.url, station.id, await png(11, 700, 700), 'image/png');
    const pin = { match: { artist: 'Daft Punk' }, image: { versionId: art.versionId } };
    await write(station.id, 'artwork.pin', 'PUT', `/stations/${station.id}/artwork/pins/daft-punk`, 201, pin);
    await write(station.id, 'artwork.pin', 'PUT', `/stations/${station.id}/artwork/pins/daft-punk`, 200, pin);
  });

  it('204: deleting a record, a broadcast, push credentials, a webhook, a credential and an operator key', async () => {
    const station = await createStation(server.url, { push: { provider: 'expo' } });
    const recordId = await newsRecord(station.id);
    await write(station.id, 'content.delete', 'DELETE', `/stations/${station.id}/records/${recordId}`, 204);
    await write(station.id, 'schedule.broadcast-delete', 'DELETE', `/stations/${station.id}/broadcasts/${randomUUID()}`, 204);
    expect((await admin(server.url, 'PUT', `/stations/${station.id}/push/credentials`, { provider: 'expo' })).status).to.equal(200);
    await write(station.id, 'push.credentials-delete', 'DELETE', `/stations/${station.id}/push/credentials`, 204);
    const hook = await admin(server.url, 'POST', `/stations/${station.id}/webhooks`, {
      url: 'https://example.org/h',
      events: ['content.published'],
    });
    await write(station.id, 'webhook.delete', 'DELETE', `/stations/${station.id}/webhooks/${hook.body.id}`, 204);
    const credential = await admin(server.url, 'POST', `/stations/${station.id}/credentials`, { scopes: ['listener:read'] });
    await write(station.id, 'credential.revoke', 'DELETE', `/stations/${station.id}/credentials/${credential.body.id}`, 204);
    const key = await admin(server.url, 'POST', '/operator-keys', { label: 'to delete', stations: '*', scopes: ['content:write'] });
    await write(null, 'operator-key.delete', 'DELETE', `/operator-keys/${key.body.id}`, 204);
  });

  it('covers every success status other than 200 that the route table documents, and every status of a write that has several', () => {
    const routes = documentedSuccesses();
    const seen = new Set(exercised.map((e) => `${e.action} ${e.status}`));
    const classes = new Set(routes.flatMap((route) => route.statuses).filter((status) => status !== 200));
    expect([...classes].sort(), 'the table documents these success statuses besides 200').to.deep.equal([201, 202, 204]);
    for (const status of classes)
      expect(
        exercised.map((e) => e.status),
        `a write answered ${status}`,
      ).to.include(status);
    for (const route of routes.filter((r) => r.statuses.length > 1))
      for (const status of route.statuses) expect([...seen], `${route.action} answered ${status}`).to.include(`${route.action} ${status}`);
  });
});
