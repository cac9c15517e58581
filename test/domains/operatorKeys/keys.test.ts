import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sharedServer, startTestServer, type TestServer } from '../../support/server.ts';
import { requiresRedis } from '../../support/mode.ts';
import { admin, request } from '../../support/http.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { hashToken } from '../../../src/lib/tokens.ts';
import { asKey, createKey } from './helpers.ts';

const record = (stationId: string, id = randomUUID()) => ({ path: `/stations/${stationId}/records/${id}`, id });

describe('operator keys', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  async function newsType(stationId: string): Promise<void> {
    const res = await admin(server.url, 'PUT', `/stations/${stationId}/content-types/news`, {
      label: 'News',
      fields: [{ key: 'title', label: 'Title', kind: 'text', required: true }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }

  it('creates wvo_ keys of 40 base62 characters, shown once, stored only as a SHA-256 hash', async () => {
    const station = await createStation(server.url);
    const res = await admin(server.url, 'POST', '/operator-keys', {
      label: 'editorial',
      stations: [station.id],
      scopes: ['content:write'],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.key).to.match(/^wvo_[0-9A-Za-z]{40}$/);
    expect(res.body).to.include({ label: 'editorial' });
    expect(res.body.stations).to.deep.equal([station.id]);
    expect(res.body.scopes).to.deep.equal(['content:write']);
    expect(Object.keys(res.body).sort()).to.deep.equal(['createdAt', 'expiresAt', 'id', 'key', 'label', 'scopes', 'stations']);
    const row = await server.svc.db('operator_keys').where({ id: res.body.id }).first();
    expect(row.key_hash).to.equal(hashToken(res.body.key));
    expect(JSON.stringify(row)).not.to.include(res.body.key);
    const one = await admin(server.url, 'GET', `/operator-keys/${res.body.id}`);
    expect(one.status).to.equal(200);
    expect(one.body).to.include({ id: res.body.id, label: 'editorial', lastUsedAt: null });
    expect(one.body).not.to.have.property('key');
    const list = await admin(server.url, 'GET', '/operator-keys');
    expect(list.body.keys.map((k: { id: string }) => k.id)).to.include(res.body.id);
    expect(JSON.stringify(list.body)).not.to.include(res.body.key);
  });

  it('refuses unknown scopes, an empty scope list, unknown stations and an expiry more than two years ahead (400)', async () => {
    const station = await createStation(server.url);
    const bad = [
      { label: 'x', stations: '*', scopes: ['content:write', 'everything'] },
      { label: 'x', stations: '*', scopes: [] },
      { label: 'x', stations: ['st_nope_nope'], scopes: ['content:write'] },
      { label: '', stations: '*', scopes: ['content:write'] },
      { label: 'x', stations: [station.id], scopes: ['content:write'], expiresAt: new Date(Date.now() + 740 * 86_400_000).toISOString() },
    ];
    for (const body of bad) {
      const res = await admin(server.url, 'POST', '/operator-keys', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    }
    const ok = await admin(server.url, 'POST', '/operator-keys', {
      label: 'x',
      stations: '*',
      scopes: ['content:write'],
      expiresAt: new Date(Date.now() + 700 * 86_400_000).toISOString(),
    });
    expect(ok.status).to.equal(201);
    const defaulted = await createKey(server.url, { stations: '*', scopes: ['plays:read'] });
    const view = await admin(server.url, 'GET', `/operator-keys/${defaulted.id}`);
    const years = (Date.parse(view.body.expiresAt) - Date.now()) / (365.25 * 86_400_000);
    expect(years).to.be.within(1.99, 2.01);
  });

  it('lets a key write within its stations and scopes, records lastUsedAt, and refuses the rest: 404 outside its stations, 403 naming the scope', async () => {
    const mine = await createStation(server.url);
    const other = await createStation(server.url);
    await newsType(mine.id);
    await newsType(other.id);
    const { id, key } = await createKey(server.url, { stations: [mine.id], scopes: ['content:write'] });

    const { path } = record(mine.id);
    const put = await asKey(server.url, key, 'PUT', path, { type: 'news', values: { title: 'Hello' } });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect((await asKey(server.url, key, 'POST', `${path}/publish`)).status).to.equal(200);
    await eventually(async () => (await admin(server.url, 'GET', `/operator-keys/${id}`)).body.lastUsedAt !== null);

    // Another station: exactly the answer of an unknown station.
    const outside = await asKey(server.url, key, 'PUT', record(other.id).path, { type: 'news', values: { title: 'x' } });
    const unknown = await admin(server.url, 'PUT', record('st_unknown_station').path, { type: 'news', values: { title: 'x' } });
    expect(outside.status).to.equal(404);
    expect(outside.body.error.code).to.equal('NOT_FOUND');
    expect(outside.body.error.message).to.equal(unknown.body.error.message);
    expect((await asKey(server.url, key, 'GET', `/stations/${other.id}/audit`)).status).to.equal(404);

    // Its station, another area (writes and reads): 403 naming the scope.
    const push = await asKey(server.url, key, 'POST', `/stations/${mine.id}/push/notifications`, {
      topic: 'alerts',
      title: 'x',
      body: 'y',
    });
    expect(push.status).to.equal(403);
    expect(push.body.error.code).to.equal('FORBIDDEN');
    expect(push.body.error.message).to.include('push:send');
    const read = await asKey(server.url, key, 'GET', `/stations/${mine.id}/credentials`);
    expect(read.status).to.equal(403);
    expect(read.body.error.message).to.include('credentials:write');
    const station = await asKey(server.url, key, 'GET', `/stations/${mine.id}`);
    expect(station.status).to.equal(403);
    expect(station.body.error.message).to.include('stations:write');
  });

  it('gives "*" keys every station, and root-only calls (keys, stations, import, the whole audit) answer 403 to any operator key', async () => {
    const station = await createStation(server.url);
    const { key } = await createKey(server.url, { stations: '*', scopes: ['stations:write', 'audit:read'] });
    expect((await asKey(server.url, key, 'GET', `/stations/${station.id}`)).status).to.equal(200);
    const rootOnly: Array<[string, string, unknown?]> = [
      ['POST', '/operator-keys', { label: 'x', stations: '*', scopes: ['audit:read'] }],
      ['GET', '/operator-keys'],
      ['POST', '/stations', { slug: 'never-made', name: 'N', timezone: 'UTC' }],
      ['POST', '/import', {}],
      ['GET', '/audit'],
    ];
    for (const [method, path, body] of rootOnly) {
      const res = await asKey(server.url, key, method, path, body);
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body.error.code).to.equal('FORBIDDEN');
      expect(res.body.error.message).to.include('root key');
    }
  });

  it('answers 401 for an unknown, malformed, expired, revoked or rotated-away key and for a listener credential', async () => {
    const station = await createStation(server.url);
    const path = `/stations/${station.id}`;
    const rotated = await createKey(server.url, { stations: '*', scopes: ['stations:write'] });
    const deleted = await createKey(server.url, { stations: '*', scopes: ['stations:write'] });
    // Warm every cache first: revocation must hold at once anyway.
    for (const k of [rotated, deleted]) expect((await asKey(server.url, k.key, 'GET', path)).status).to.equal(200);
    const rotation = await admin(server.url, 'POST', `/operator-keys/${rotated.id}/rotate`);
    expect(rotation.status).to.equal(201);
    expect(rotation.body.key).to.match(/^wvo_[0-9A-Za-z]{40}$/);
    expect(rotation.body.id).to.equal(rotated.id);
    expect((await admin(server.url, 'DELETE', `/operator-keys/${deleted.id}`)).status).to.equal(204);
    expect((await admin(server.url, 'GET', `/operator-keys/${deleted.id}`)).status).to.equal(404);
    const expiring = await createKey(server.url, {
      stations: '*',
      scopes: ['stations:write'],
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    const listener = await admin(server.url, 'POST', `/stations/${station.id}/credentials`, { scopes: ['listener:read'] });
    await eventually(async () => (await asKey(server.url, expiring.key, 'GET', path)).status === 401, {
      timeoutMs: 10_000,
      intervalMs: 200,
    });
    const refused = [rotated.key, deleted.key, `wvo_${'A'.repeat(40)}`, 'wvo_short', listener.body.token, 'not-a-key'];
    for (const value of refused) {
      const res = await asKey(server.url, value, 'GET', path);
      expect(res.status, value).to.equal(401);
      expect(res.body.error.code).to.equal('UNAUTHENTICATED');
    }
    expect((await request(server.url, 'GET', `/admin/v1${path}`)).status).to.equal(401);
    expect((await asKey(server.url, rotation.body.key, 'GET', path)).status).to.equal(200);
  });

  it('stops a rotated or deleted key at once in every web process (the caches are dropped over Redis)', async function () {
    requiresRedis(this, 'two web processes share invalidations only through Redis');
    const other = await startTestServer();
    try {
      const station = await createStation(server.url);
      const path = `/stations/${station.id}`;
      const rotated = await createKey(server.url, { stations: '*', scopes: ['stations:write'] });
      const deleted = await createKey(server.url, { stations: '*', scopes: ['stations:write'] });
      // Both processes hold both keys in their caches.
      for (const base of [server.url, other.url]) {
        for (const k of [rotated, deleted]) expect((await asKey(base, k.key, 'GET', path)).status).to.equal(200);
      }
      expect((await admin(server.url, 'POST', `/operator-keys/${rotated.id}/rotate`)).status).to.equal(201);
      expect((await admin(server.url, 'DELETE', `/operator-keys/${deleted.id}`)).status).to.equal(204);
      // The very next request in the other process is refused: the writer answered once every process dropped them.
      for (const k of [rotated, deleted]) expect((await asKey(other.url, k.key, 'GET', path)).status).to.equal(401);
    } finally {
      await other.close();
    }
  });

  it('compares the root key in constant time and finds operator keys only by their SHA-256 hash', () => {
    const source = readFileSync(new URL('../../../src/http/adminAccess.ts', import.meta.url), 'utf8');
    expect(source).to.match(/safeEqual\(token, root\)/);
    expect(source).to.match(/byHash\(hashToken\(token\)\)/);
    expect(source).not.to.match(/token\s*===|===\s*token|token\s*!==/);
  });
});
