import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { createStation, createToken } from '../../support/factories.ts';

// Push devices: docs/push.md#routes, docs/push.md#storage.

const fcmToken = (label: string) => `fcm-device-${label}-${Math.random().toString(36).slice(2)}`;

describe('push devices …/push/devices', () => {
  const { clock, server } = useClockedServer('2026-11-21T12:00:00.000Z');

  /** A station with push provider fcm (unless overridden) and a push:register credential. */
  async function pushFixture(overrides: Record<string, unknown> = {}) {
    const station = await createStation(server.url, { push: { provider: 'fcm' }, ...overrides });
    const { token } = await createToken(server.url, station.id, ['push:register']);
    const path = `/api/v1/stations/${station.slug}/push/devices`;
    const call = (method: string, json?: unknown, credential: string | null = token) =>
      request(server.url, method, path, { token: credential ?? undefined, json });
    const count = async () => (await admin(server.url, 'GET', `/stations/${station.id}/push/devices/count`)).body;
    const row = (device: string) =>
      server.svc
        .db('push_devices')
        .where({ station_id: station.id, token_hash: createHash('sha256').update(device).digest('hex') })
        .first();
    return { station, token, path, call, count, row };
  }

  describe('POST registers or refreshes', () => {
    it('registers a device with topics {alerts: true, content: true}; 200 {ok: true}, no-store, CORS', async () => {
      const { call, count, row } = await pushFixture();
      const device = fcmToken('a');
      const res = await call('POST', { token: device, platform: 'android', provider: 'fcm' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ ok: true });
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
      expect(await count()).to.deep.equal({ total: 1, platforms: { ios: 0, android: 1 }, topics: { alerts: 1, content: 1 } });
      const stored = await row(device);
      expect(stored, 'keyed by the SHA-256 of the token').to.include({
        token: device,
        platform: 'android',
        provider: 'fcm',
        topic_alerts: true,
        topic_content: true,
      });
    });

    it('an existing token is refreshed (platform, provider, updatedAt), not duplicated, and keeps its topics', async () => {
      const { call, count, row } = await pushFixture();
      const device = fcmToken('b');
      expect((await call('POST', { token: device, platform: 'android', provider: 'fcm' })).status).to.equal(200);
      expect((await call('PATCH', { token: device, topics: { content: false } })).status).to.equal(200);
      const before = await row(device);
      clock.advance(60_000);
      expect((await call('POST', { token: device, platform: 'ios', provider: 'fcm' })).status).to.equal(200);
      expect(await count()).to.deep.equal({ total: 1, platforms: { ios: 1, android: 0 }, topics: { alerts: 1, content: 0 } });
      const after = await row(device);
      expect(after.platform).to.equal('ios');
      expect(after.updated_at.getTime() - before.updated_at.getTime()).to.equal(60_000);
      expect(after.created_at.getTime()).to.equal(before.created_at.getTime());
    });

    it('concurrent registrations of one token never duplicate it', async () => {
      const { call, count } = await pushFixture();
      const device = fcmToken('c');
      const results = await Promise.all(Array.from({ length: 8 }, () => call('POST', { token: device, platform: 'ios', provider: 'fcm' })));
      expect(results.map((r) => r.status)).to.deep.equal(Array(8).fill(200));
      expect((await count()).total).to.equal(1);
    });

    it('optional topics on POST set the named topics of the registration', async () => {
      const { call, row } = await pushFixture();
      const device = fcmToken('d');
      expect((await call('POST', { token: device, platform: 'ios', provider: 'fcm', topics: { alerts: false } })).status).to.equal(200);
      expect(await row(device)).to.include({ topic_alerts: false, topic_content: true });
    });

    it('stores a token per station: the same token at two stations is two registrations', async () => {
      const a = await pushFixture();
      const b = await pushFixture();
      const device = fcmToken('shared');
      await a.call('POST', { token: device, platform: 'ios', provider: 'fcm' });
      await b.call('POST', { token: device, platform: 'ios', provider: 'fcm' });
      expect((await a.call('DELETE', { token: device })).status).to.equal(200);
      expect((await a.count()).total).to.equal(0);
      expect((await b.count()).total).to.equal(1);
      expect((await b.call('PATCH', { token: device, topics: { alerts: false } })).status).to.equal(200);
    });

    it('409 PROVIDER_MISMATCH when the station has no push provider or another one; a provider change applies on the next request', async () => {
      const none = await pushFixture({ push: { provider: null } });
      const res = await none.call('POST', { token: fcmToken('e'), platform: 'android', provider: 'fcm' });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('PROVIDER_MISMATCH');
      expect(res.body.error.requestId).to.equal(res.headers.get('x-request-id'));
      const apns = await pushFixture({ push: { provider: 'apns' } });
      const mismatch = await apns.call('POST', { token: fcmToken('f'), platform: 'ios', provider: 'fcm' });
      expect(mismatch.status).to.equal(409);
      expect(mismatch.body.error.code).to.equal('PROVIDER_MISMATCH');
      expect((await apns.count()).total, 'nothing stored').to.equal(0);
      expect((await apns.call('POST', { token: fcmToken('g'), platform: 'ios', provider: 'apns' })).status).to.equal(200);
      await admin(server.url, 'PATCH', `/stations/${apns.station.id}`, { push: { provider: 'expo' } });
      expect((await apns.call('POST', { token: fcmToken('h'), platform: 'ios', provider: 'apns' })).status).to.equal(409);
      expect(
        (await apns.call('POST', { token: 'ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]', platform: 'android', provider: 'expo' })).status,
      ).to.equal(200);
    });

    it('400 VALIDATION_ERROR with issues naming each field, and suggestions for close values', async () => {
      const { call, count } = await pushFixture();
      const missing = await call('POST', {});
      expect(missing.status).to.equal(400);
      expect(missing.body.error.code).to.equal('VALIDATION_ERROR');
      expect(missing.body.error.issues.map((i: { path: string }) => i.path).sort()).to.deep.equal(['platform', 'provider', 'token']);
      const typo = await call('POST', { token: fcmToken('i'), platform: 'iOS', provider: 'fcn' });
      expect(typo.status).to.equal(400);
      const byPath = Object.fromEntries(typo.body.error.issues.map((i: { path: string }) => [i.path, i]));
      expect(byPath.provider).to.include({ code: 'invalid_value', suggestion: 'fcm' });
      expect(byPath.platform).to.include({ code: 'invalid_value', suggestion: 'ios' });
      const unknown = await call('POST', { token: fcmToken('j'), plattform: 'ios', provider: 'fcm' });
      expect(unknown.body.error.issues).to.deep.include({
        path: 'plattform',
        code: 'unknown_property',
        message: 'plattform is not a known property',
        suggestion: 'platform',
      });
      const wrongType = await call('POST', { token: 42, platform: 'ios', provider: 'fcm' });
      expect(wrongType.body.error.issues[0]).to.include({ path: 'token', code: 'invalid_type' });
      expect((await call('POST', [])).status).to.equal(400);
      expect((await count()).total, 'nothing half-written').to.equal(0);
    });

    it('token length 1 to 4096: empty and 4097 characters are 400, 1 and 4096 are registered; control characters are 400, never 500', async () => {
      const { call, count } = await pushFixture();
      const empty = await call('POST', { token: '', platform: 'ios', provider: 'fcm' });
      expect(empty.status).to.equal(400);
      expect(empty.body.error.issues[0]).to.include({ path: 'token', code: 'too_small' });
      const long = await call('POST', { token: 'x'.repeat(4097), platform: 'ios', provider: 'fcm' });
      expect(long.status).to.equal(400);
      expect(long.body.error.issues[0]).to.include({ path: 'token', code: 'too_big' });
      expect((await call('POST', { token: 'x', platform: 'ios', provider: 'fcm' })).status).to.equal(200);
      expect((await call('POST', { token: 'y'.repeat(4096), platform: 'ios', provider: 'fcm' })).status).to.equal(200);
      const nul = await call('POST', { token: 'abc\u0000def', platform: 'ios', provider: 'fcm' });
      expect(nul.status).to.equal(400);
      expect(nul.body.error.issues[0].path).to.equal('token');
      expect((await count()).total).to.equal(2);
    });
  });

  it('a body sent in another Content-Type is 400 naming the body, not a list of missing fields', async () => {
    const { path, token, count } = await pushFixture();
    const body = JSON.stringify({ token: 'device-token-plain', platform: 'ios', provider: 'fcm' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await request(server.url, 'POST', path, { token, body, headers: { 'content-type': type } });
      expect(res.status, type).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.issues).to.deep.equal([
        { path: 'body', code: 'invalid_json', message: 'the body must be JSON, sent with Content-Type: application/json' },
      ]);
    }
    expect((await count()).total, 'nothing stored').to.equal(0);
  });

  it('a malformed JSON body is 400 VALIDATION_ERROR', async () => {
    const { path, token } = await pushFixture();
    const res = await request(server.url, 'POST', path, { token, body: '{"token":', headers: { 'content-type': 'application/json' } });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
  });

  describe('PATCH changes the listed topics', () => {
    it('changes only the listed topics; unspecified topics keep their setting; turning a topic off keeps the token', async () => {
      const { call, count, row } = await pushFixture();
      const device = fcmToken('k');
      await call('POST', { token: device, platform: 'android', provider: 'fcm' });
      const off = await call('PATCH', { token: device, topics: { alerts: false } });
      expect(off.status).to.equal(200);
      expect(off.body).to.deep.equal({ ok: true });
      expect(await row(device)).to.include({ topic_alerts: false, topic_content: true });
      await call('PATCH', { token: device, topics: { content: false } });
      expect(await row(device)).to.include({ topic_alerts: false, topic_content: false });
      expect((await count()).total, 'both topics off, still registered').to.equal(1);
      await call('PATCH', { token: device, topics: { alerts: true, content: true } });
      expect(await row(device)).to.include({ topic_alerts: true, topic_content: true });
    });

    it('404 NOT_FOUND when the token is not registered (never registered, or removed)', async () => {
      const { call } = await pushFixture();
      const res = await call('PATCH', { token: fcmToken('never'), topics: { alerts: false } });
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('NOT_FOUND');
      const device = fcmToken('l');
      await call('POST', { token: device, platform: 'ios', provider: 'fcm' });
      await call('DELETE', { token: device });
      expect((await call('PATCH', { token: device, topics: { content: true } })).status).to.equal(404);
    });

    it('topics: {} is a valid update that changes nothing: 200 {ok: true}, the row untouched; 404 when the token is not registered', async () => {
      const { call, row } = await pushFixture();
      const device = fcmToken('e');
      await call('POST', { token: device, platform: 'ios', provider: 'fcm', topics: { alerts: false } });
      const before = await row(device);
      const res = await call('PATCH', { token: device, topics: {} });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ ok: true });
      expect(await row(device)).to.deep.equal(before);
      expect((await call('PATCH', { token: fcmToken('f'), topics: {} })).status).to.equal(404);
    });

    it('400 for a body other than {token, topics: {alerts?, content?}}: other properties, non-boolean topics, missing topics', async () => {
      const { call, row } = await pushFixture();
      const device = fcmToken('m');
      await call('POST', { token: device, platform: 'ios', provider: 'fcm' });
      const cases: Array<[unknown, string, string]> = [
        [{ token: device, topics: { alerts: false }, platform: 'ios' }, 'platform', 'unknown_property'],
        [{ token: device, topics: { alerts: false, news: true } }, 'topics.news', 'unknown_property'],
        [{ token: device, topics: { alert: false } }, 'topics.alert', 'unknown_property'],
        [{ token: device, topics: { alerts: 'no' } }, 'topics.alerts', 'invalid_type'],
        [{ token: device }, 'topics', 'required'],
        [{ topics: { alerts: false } }, 'token', 'required'],
        [{ token: device, topics: null }, 'topics', 'invalid_type'],
      ];
      for (const [body, path, code] of cases) {
        const res = await call('PATCH', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.issues, JSON.stringify(body)).to.satisfy((issues: Array<{ path: string; code: string }>) =>
          issues.some((i) => i.path === path && i.code === code),
        );
      }
      const typo = await call('PATCH', { token: device, topics: { alert: false } });
      expect(typo.body.error.issues[0].suggestion).to.equal('alerts');
      expect(await row(device), 'unchanged').to.include({ topic_alerts: true, topic_content: true });
    });
  });

  describe('DELETE unregisters', () => {
    it('removes the registration; 200 {ok: true} even when the token was not registered', async () => {
      const { call, count } = await pushFixture();
      const device = fcmToken('n');
      await call('POST', { token: device, platform: 'ios', provider: 'fcm' });
      const res = await call('DELETE', { token: device });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ ok: true });
      expect((await count()).total).to.equal(0);
      expect((await call('DELETE', { token: device })).status).to.equal(200);
      expect((await call('DELETE', { token: fcmToken('never') })).body).to.deep.equal({ ok: true });
    });

    it('400 without a token or with other properties', async () => {
      const { call } = await pushFixture();
      expect((await call('DELETE', {})).body.error.issues[0]).to.include({ path: 'token', code: 'required' });
      expect((await call('DELETE')).status).to.equal(400);
      expect((await call('DELETE', { token: 'x', platform: 'ios' })).status).to.equal(400);
    });
  });

  describe('gates', () => {
    it('401 UNAUTHENTICATED without a credential, with a listener:read credential, or another station’s push credential', async () => {
      const a = await pushFixture();
      const b = await pushFixture();
      const body = { token: fcmToken('o'), platform: 'ios', provider: 'fcm' };
      const { token: listenerOnly } = await createToken(server.url, a.station.id, ['listener:read']);
      for (const credential of [null, listenerOnly, b.token]) {
        for (const method of ['POST', 'PATCH', 'DELETE']) {
          const res = await a.call(method, method === 'PATCH' ? { token: body.token, topics: { alerts: true } } : body, credential);
          expect(res.status, `${method} ${credential ? 'wrong credential' : 'no credential'}`).to.equal(401);
          expect(res.body.error.code).to.equal('UNAUTHENTICATED');
        }
      }
      const raw = await request(server.url, 'POST', a.path, { headers: { authorization: a.token }, json: body });
      expect(raw.status, 'the raw token without "Bearer "').to.equal(401);
      expect((await a.count()).total).to.equal(0);
    });

    it('404 for an unknown, inactive or public-offline station (before the credential), and MODULE_DISABLED when push is switched off', async () => {
      const a = await pushFixture();
      const body = { token: fcmToken('p'), platform: 'ios', provider: 'fcm' };
      const unknown = await request(server.url, 'POST', '/api/v1/stations/no-such-station/push/devices', { token: a.token, json: body });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('NOT_FOUND');
      await admin(server.url, 'PATCH', `/stations/${a.station.id}`, { publicOnline: false });
      expect((await a.call('POST', body)).status).to.equal(404);
      await admin(server.url, 'PATCH', `/stations/${a.station.id}`, { publicOnline: true, active: false });
      expect((await a.call('DELETE', { token: body.token })).status).to.equal(404);
      await admin(server.url, 'PATCH', `/stations/${a.station.id}`, { active: true, modules: { push: false } });
      for (const method of ['POST', 'PATCH', 'DELETE']) {
        const res = await a.call(method, body);
        expect(res.status).to.equal(404);
        expect(res.body.error.code).to.equal('MODULE_DISABLED');
      }
      expect((await a.call('POST', { token: 'bad' }, null)).status, 'credential before module').to.equal(401);
      await admin(server.url, 'PATCH', `/stations/${a.station.id}`, { modules: { push: true } });
      expect((await a.call('POST', body)).status).to.equal(200);
    });

    it('answers CORS preflight without a credential', async () => {
      const { path } = await pushFixture();
      const res = await request(server.url, 'OPTIONS', path, {
        headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH' },
      });
      expect(res.status).to.equal(204);
      expect(res.headers.get('access-control-allow-methods')).to.include('PATCH').and.include('DELETE');
    });
  });

  it('admin device count is 404 for an unknown station and 401 without the operator token', async () => {
    expect((await admin(server.url, 'GET', '/stations/st_nope/push/devices/count')).status).to.equal(404);
    expect((await request(server.url, 'GET', '/admin/v1/stations/st_nope/push/devices/count')).status).to.equal(401);
  });
});
