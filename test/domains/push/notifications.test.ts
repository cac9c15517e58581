import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { createStation } from '../../support/factories.ts';
import { countsAddUp, credentialsBody, pushStation, startPushWorld, type PushWorld } from './sendHelpers.ts';

// docs/push.md#credentials, docs/push.md#sending: credentials routes, the notification routes, `notify` on publish.

describe('push credentials …/push/credentials', function () {
  this.timeout(30_000);
  let world: PushWorld;
  before(async () => (world = await startPushWorld({}, { workers: false })));
  after(() => world.close());

  for (const provider of ['fcm', 'apns', 'expo'] as const) {
    it(`${provider}: PUT answers only the non-secret parts; GET the same view; DELETE 204 then GET 404`, async () => {
      const station = await createStation(world.server.url, { push: { provider } });
      const path = `/stations/${station.id}/push/credentials`;
      const put = await admin(world.server.url, 'PUT', path, credentialsBody(world, provider));
      expect(put.status).to.equal(200);
      expect(put.body).to.include({ provider, configured: true });
      expect(put.body.updatedAt).to.be.a('string');
      if (provider === 'fcm') expect(put.body).to.include({ projectId: 'waveline-test', clientEmail: world.fcm.account.client_email });
      if (provider === 'apns')
        expect(put.body).to.include({
          keyId: world.apns.key.keyId,
          teamId: world.apns.key.teamId,
          bundleId: 'fm.waveline.test',
          environment: 'production',
        });
      if (provider === 'expo') expect(put.body).to.include({ accessToken: false });
      expect(put.text).not.to.include('PRIVATE KEY');
      const got = await admin(world.server.url, 'GET', path);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(put.body);
      // Encrypted at rest: the stored row holds no key material in clear.
      const row = await world.server.svc.db('push_credentials').where({ station_id: station.id }).first();
      expect(JSON.stringify(row)).not.to.include('PRIVATE KEY');
      expect((await admin(world.server.url, 'DELETE', path)).status).to.equal(204);
      expect((await admin(world.server.url, 'GET', path)).status).to.equal(404);
    });
  }

  it('an expo access token is stored encrypted and shown only as accessToken: true', async () => {
    const station = await createStation(world.server.url, { push: { provider: 'expo' } });
    const secret = 'expo-access-token-' + Math.random().toString(36).slice(2);
    const put = await admin(world.server.url, 'PUT', `/stations/${station.id}/push/credentials`, { provider: 'expo', accessToken: secret });
    expect(put.body).to.include({ accessToken: true });
    expect(put.text).not.to.include(secret);
    const row = await world.server.svc.db('push_credentials').where({ station_id: station.id }).first();
    expect(JSON.stringify(row)).not.to.include(secret);
  });

  it('a provider other than the station’s push.provider (or none) → 409 PROVIDER_MISMATCH', async () => {
    const fcmStation = await createStation(world.server.url, { push: { provider: 'fcm' } });
    const res = await admin(world.server.url, 'PUT', `/stations/${fcmStation.id}/push/credentials`, credentialsBody(world, 'apns'));
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal('PROVIDER_MISMATCH');
    const none = await createStation(world.server.url);
    const res2 = await admin(world.server.url, 'PUT', `/stations/${none.id}/push/credentials`, credentialsBody(world, 'fcm'));
    expect(res2.status).to.equal(409);
  });

  it('a key that does not parse → 400 naming the field (and never echoing the key)', async () => {
    const fcmStation = await createStation(world.server.url, { push: { provider: 'fcm' } });
    const bad = '-----BEGIN PRIVATE KEY-----\nnot-a-key-secretmaterial\n-----END PRIVATE KEY-----\n';
    const res = await admin(world.server.url, 'PUT', `/stations/${fcmStation.id}/push/credentials`, {
      provider: 'fcm',
      serviceAccount: { ...world.fcm.account, private_key: bad },
    });
    expect(res.status).to.equal(400);
    expect(JSON.stringify(res.body)).to.include('serviceAccount.private_key');
    expect(res.text).not.to.include('secretmaterial');
    const apnsStation = await createStation(world.server.url, { push: { provider: 'apns' } });
    const rsaKey = world.fcm.account.private_key; // parses, but is not an ES256 key
    const res2 = await admin(world.server.url, 'PUT', `/stations/${apnsStation.id}/push/credentials`, {
      ...credentialsBody(world, 'apns'),
      privateKey: rsaKey,
    });
    expect(res2.status).to.equal(400);
    expect(res2.body.error.issues.map((i: { path: string }) => i.path)).to.include('privateKey');
  });
});

describe('push notifications …/push/notifications', function () {
  this.timeout(60_000);
  let world: PushWorld;
  before(async () => (world = await startPushWorld()));
  after(() => world.close());

  it('POST → 202 with the view; GET one; the list {notifications, nextCursor} newest first with cursors', async () => {
    const s = await pushStation(world, 'fcm');
    await s.register('fcm-list-device-1');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await s.send({ topic: 'alerts', title: `Alert ${i}` });
      expect(res.status).to.equal(202);
      ids.push(res.body.id);
      if (i === 0) {
        expect(res.body).to.include({ topic: 'alerts', source: 'admin', recordId: null, title: 'Alert 0', body: null, url: null });
        expect(res.body).to.include({ ttlSeconds: 86400, collapseKey: null, error: null });
        expect(res.body.data).to.deep.equal({});
        expect(res.body.counts).to.have.keys('targeted', 'sent', 'failed', 'pruned', 'pending');
        expect(res.body.createdAt).to.be.a('string');
      }
    }
    const done = await s.finished(ids[0]);
    expect(done).to.include({ status: 'done' });
    expect(done.counts).to.deep.equal({ targeted: 1, sent: 1, failed: 0, pruned: 0, pending: 0 });
    expect(done.startedAt).to.be.a('string');
    expect(done.finishedAt).to.be.a('string');
    const page1 = await admin(world.server.url, 'GET', `/stations/${s.station.id}/push/notifications?limit=2`);
    expect(page1.status).to.equal(200);
    expect(page1.body.notifications.map((n: { id: string }) => n.id)).to.deep.equal([ids[2], ids[1]]);
    const page2 = await admin(
      world.server.url,
      'GET',
      `/stations/${s.station.id}/push/notifications?limit=2&cursor=${encodeURIComponent(page1.body.nextCursor)}`,
    );
    expect(page2.body.notifications.map((n: { id: string }) => n.id)).to.deep.equal([ids[0]]);
    expect(page2.body.nextCursor).to.equal(null);
    expect((await admin(world.server.url, 'GET', `/stations/${s.station.id}/push/notifications/${crypto.randomUUID()}`)).status).to.equal(
      404,
    );
  });

  it('idempotencyKey: same body within 24 h → 200 with the existing one (nothing sent again); another body → 409 IDEMPOTENCY_CONFLICT', async () => {
    const s = await pushStation(world, 'fcm');
    const device = 'fcm-idem-device';
    await s.register(device);
    const body = { topic: 'alerts', title: 'Once', idempotencyKey: 'k-1' };
    const first = await s.send(body);
    expect(first.status).to.equal(202);
    await s.finished(first.body.id);
    const again = await s.send(body);
    expect(again.status).to.equal(200);
    expect(again.body.id).to.equal(first.body.id);
    const other = await s.send({ ...body, title: 'Twice' });
    expect(other.status).to.equal(409);
    expect(other.body.error.code).to.equal('IDEMPOTENCY_CONFLICT');
    expect(world.fcm.perDevice.get(device)).to.equal(1);
  });

  it('409 PUSH_NOT_CONFIGURED naming which: no provider, no credentials, modules.push off', async () => {
    const none = await createStation(world.server.url);
    const r1 = await admin(world.server.url, 'POST', `/stations/${none.id}/push/notifications`, { topic: 'alerts', title: 'x' });
    expect(r1.status).to.equal(409);
    expect(r1.body.error.code).to.equal('PUSH_NOT_CONFIGURED');
    expect(r1.body.error.message).to.match(/provider/);
    const noCreds = await createStation(world.server.url, { push: { provider: 'fcm' } });
    const r2 = await admin(world.server.url, 'POST', `/stations/${noCreds.id}/push/notifications`, { topic: 'alerts', title: 'x' });
    expect(r2.body.error.code).to.equal('PUSH_NOT_CONFIGURED');
    expect(r2.body.error.message).to.match(/credentials/);
    const s = await pushStation(world, 'fcm', { modules: { push: false } });
    const r3 = await s.send({ topic: 'alerts', title: 'x' });
    expect(r3.body.error.code).to.equal('PUSH_NOT_CONFIGURED');
    expect(r3.body.error.message).to.match(/modules\.push/);
  });

  it('400 for an http:// url, data over 2 KiB, a non-string data value, a bad collapseKey or ttlSeconds', async () => {
    const s = await pushStation(world, 'fcm');
    for (const bad of [
      { topic: 'alerts', title: 'x', url: 'http://example.com/a' },
      { topic: 'alerts', title: 'x', data: { big: 'x'.repeat(2100) } },
      { topic: 'alerts', title: 'x', data: { n: 1 } },
      { topic: 'alerts', title: 'x', collapseKey: 'has space' },
      { topic: 'alerts', title: 'x', ttlSeconds: 59 },
      { topic: 'news', title: 'x' },
      { topic: 'alerts', title: '' },
    ]) {
      const res = await s.send(bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
    }
    expect((await s.send({ topic: 'alerts', title: 'ok', url: '/news/1' })).status).to.equal(202);
  });

  it('cancel → 200 with the view; devices not yet sent to are not sent to', async () => {
    const s = await pushStation(world, 'fcm');
    // Paced at this station: 1 device/200 ms would take long; cancel straight away.
    const devices = Array.from({ length: 300 }, (_, i) => `fcm-cancel-${s.station.id}-${i}`);
    await s.registerMany(devices);
    world.fcm.script = (token) => (token.startsWith('fcm-cancel-') ? 'hang' : 'ok');
    try {
      const res = await s.send({ topic: 'alerts', title: 'Stop me' });
      const cancelled = await admin(world.server.url, 'POST', `/stations/${s.station.id}/push/notifications/${res.body.id}/cancel`);
      expect(cancelled.status).to.equal(200);
      expect(cancelled.body.status).to.equal('cancelled');
      countsAddUp(cancelled.body);
      const sentBefore = world.fcm.sent.filter((m) => m.token.startsWith(`fcm-cancel-${s.station.id}`)).length;
      expect(sentBefore).to.be.below(300);
    } finally {
      world.fcm.script = () => 'ok';
    }
  });

  it('notify on publish: one content notification per (record, revision); data {type, id, revision, slug}; title defaults to values.title', async () => {
    const s = await pushStation(world, 'fcm');
    await s.register('fcm-notify-device', { alerts: false });
    const base = `/stations/${s.station.id}`;
    expect(
      (
        await admin(world.server.url, 'PUT', `${base}/content-types/news`, {
          label: 'News',
          fields: [
            { key: 'title', label: 'Title', kind: 'text', required: true },
            { key: 'slug', label: 'Slug', kind: 'text' },
          ],
        })
      ).status,
    ).to.equal(200);
    const recordId = crypto.randomUUID();
    expect(
      (
        await admin(world.server.url, 'PUT', `${base}/records/${recordId}`, {
          type: 'news',
          values: { title: 'Storm warning', slug: 'storm' },
        })
      ).status,
    ).to.equal(200);
    const pub = await admin(world.server.url, 'POST', `${base}/records/${recordId}/publish`, { notify: { url: '/news/storm' } });
    expect(pub.status, JSON.stringify(pub.body)).to.equal(200);
    expect(pub.body.notificationId).to.be.a('string');
    const again = await admin(world.server.url, 'POST', `${base}/records/${recordId}/publish`, { notify: {} });
    expect(again.body.notificationId).to.equal(pub.body.notificationId);
    const view = await s.finished(pub.body.notificationId);
    expect(view).to.include({ topic: 'content', source: 'content', recordId, title: 'Storm warning', url: '/news/storm', status: 'done' });
    expect(view.data).to.deep.equal({ type: 'news', id: recordId, revision: '1', slug: 'storm' });
    expect(view.counts.sent).to.equal(1);
    const message = world.fcm.sent.find((m) => m.token === 'fcm-notify-device');
    expect(message?.body.message.android.priority).to.equal('NORMAL');
    // Without push configured, the publish still succeeds, with notificationId null.
    const plain = await createStation(world.server.url);
    await admin(world.server.url, 'PUT', `/stations/${plain.id}/content-types/news`, {
      label: 'News',
      fields: [{ key: 'title', label: 'Title', kind: 'text' }],
    });
    const other = crypto.randomUUID();
    await admin(world.server.url, 'PUT', `/stations/${plain.id}/records/${other}`, { type: 'news', values: {} });
    const pub2 = await admin(world.server.url, 'POST', `/stations/${plain.id}/records/${other}/publish`, { notify: {} });
    expect(pub2.status).to.equal(200);
    expect(pub2.body.notificationId).to.equal(null);
    // Without notify, the answer is as before.
    const pub3 = await admin(world.server.url, 'POST', `/stations/${plain.id}/records/${other}/publish`, {});
    expect(pub3.body).not.to.have.property('notificationId');
  });
});
