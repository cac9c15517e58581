import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { registry } from '../../../src/lib/metrics.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { startReceiver } from '../../support/receiver.ts';
import { countsAddUp, deviceCount, pushStation, startPushWorld, type PushWorld } from './sendHelpers.ts';

// docs/push.md#how-sending-works-srcdomainspushnotifications: delivery over each provider's wire format, dead
// tokens, retries, refused credentials, TTL, pacing, metrics and the push.finished webhook.

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2)}`;

async function metric(provider: string, result: string): Promise<number> {
  const m = await registry.getSingleMetric('waveline_push_messages_total')?.get();
  return m?.values.find((v) => v.labels.provider === provider && v.labels.result === result)?.value ?? 0;
}

describe('push delivery', function () {
  this.timeout(60_000);
  let world: PushWorld;
  const clock = new ManualClock(Date.now());
  before(async () => (world = await startPushWorld({}, { clock })));
  after(() => world.close());
  afterEach(() => {
    world.fcm.script = world.apns.script = world.expo.script = () => 'ok';
    world.fcm.revoked = world.apns.revoked = false;
  });

  it('FCM HTTP v1: JWT-bearer token (verified by the fake) reused; messages:send body as documented', async () => {
    const s = await pushStation(world, 'fcm');
    const device = unique('fcm-wire');
    await s.register(device);
    const issuedBefore = world.fcm.issued.length;
    const res = await s.send({
      topic: 'alerts',
      title: 'Hello',
      body: 'World',
      url: 'https://example.com/a',
      data: { k: 'v' },
      ttlSeconds: 600,
      collapseKey: 'news',
    });
    const view = await s.finished(res.body.id);
    expect(view.counts).to.deep.equal({ targeted: 1, sent: 1, failed: 0, pruned: 0, pending: 0 });
    const message = world.fcm.sent.find((m) => m.token === device)!.body.message;
    expect(message.notification).to.deep.equal({ title: 'Hello', body: 'World' });
    expect(message.data).to.deep.equal({ k: 'v', notificationId: res.body.id, topic: 'alerts', url: 'https://example.com/a' });
    expect(message.android).to.deep.equal({ ttl: '600s', priority: 'HIGH', collapse_key: 'news' });
    const expiration = Math.floor(new Date(res.body.createdAt).getTime() / 1000) + 600;
    expect(message.apns).to.deep.equal({ headers: { 'apns-expiration': String(expiration), 'apns-collapse-id': 'news' } });
    expect(world.fcm.badAssertions).to.equal(0);
    // A second notification reuses the access token.
    const issued = world.fcm.issued.length;
    const again = await s.send({ topic: 'content', title: 'Again' });
    await s.finished(again.body.id);
    expect(world.fcm.issued.length).to.equal(issued);
    expect(issued - issuedBefore).to.be.at.most(1);
    expect(world.fcm.sent.filter((m) => m.token === device).pop()!.body.message.android.priority).to.equal('NORMAL');
  });

  it('FCM: 404 UNREGISTERED and 400 INVALID_ARGUMENT (token not valid) → pruned and removed; 429 with Retry-After and 503 → retried', async () => {
    const s = await pushStation(world, 'fcm');
    const [dead, invalid, limited, unavailable, fine] = ['dead', 'invalid', 'limited', 'unavailable', 'fine'].map((l) =>
      unique(`fcm-${l}`),
    );
    for (const d of [dead, invalid, limited, unavailable, fine]) await s.register(d);
    const retriedBefore = await metric('fcm', 'retried');
    const prunedBefore = await metric('fcm', 'pruned');
    const firstAttempt = new Map<string, number>();
    world.fcm.script = (token, nth) => {
      if (token === dead) return 'dead';
      if (token === invalid) return 'invalid';
      if (token === limited && nth === 1) {
        firstAttempt.set(token, Date.now());
        return { status: 429, retryAfter: 1 };
      }
      if (token === limited) {
        firstAttempt.set('again', Date.now());
        return 'ok';
      }
      if (token === unavailable && nth < 3) return 503;
      return 'ok';
    };
    const res = await s.send({ topic: 'alerts', title: 'Mixed' });
    const view = await s.finished(res.body.id);
    expect(view.counts).to.deep.equal({ targeted: 5, sent: 3, failed: 0, pruned: 2, pending: 0 });
    expect(view.status).to.equal('done');
    expect(await deviceCount(world, s.station.id)).to.equal(3);
    expect(world.fcm.perDevice.get(limited)).to.equal(2);
    expect(world.fcm.perDevice.get(unavailable)).to.equal(3);
    expect(firstAttempt.get('again')! - firstAttempt.get(limited)!, 'Retry-After honoured').to.be.at.least(950);
    expect((await metric('fcm', 'retried')) - retriedBefore).to.be.at.least(3);
    expect((await metric('fcm', 'pruned')) - prunedBefore).to.equal(2);
  });

  it('FCM: credentials refused (401 after one fresh token) → failed with error naming the answer', async () => {
    const s = await pushStation(world, 'fcm');
    await s.register(unique('fcm-refused'));
    // The cached token is refused: a fresh one is fetched once, and the token endpoint refuses too.
    world.fcm.revoked = true;
    const res = await s.send({ topic: 'alerts', title: 'No' });
    const view = await s.finished(res.body.id);
    expect(view.status).to.equal('failed');
    expect(view.error)
      .to.match(/fcm/)
      .and.to.match(/invalid_grant|401/);
    countsAddUp(view);
    expect(view.counts.failed).to.equal(1);
  });

  it('APNs over HTTP/2 + TLS: ES256 token (verified) reused on few connections; headers and body as documented', async () => {
    const s = await pushStation(world, 'apns');
    const devices = Array.from({ length: 30 }, (_, i) => unique(`apns-${i}`));
    for (const d of devices.slice(0, 3)) await s.register(d);
    await s.registerMany(devices.slice(3));
    const connectionsBefore = world.apns.connections;
    const res = await s.send({
      topic: 'alerts',
      title: 'Hi',
      body: 'There',
      url: '/p',
      data: { a: 'b' },
      ttlSeconds: 120,
      collapseKey: 'c1',
    });
    const view = await s.finished(res.body.id);
    expect(view.counts).to.deep.equal({ targeted: 30, sent: 30, failed: 0, pruned: 0, pending: 0 });
    expect(world.apns.problems).to.deep.equal([]);
    const sent = world.apns.sent.find((m) => m.token === devices[0])!;
    expect(sent.headers).to.include({
      'apns-topic': 'fm.waveline.test',
      'apns-push-type': 'alert',
      'apns-priority': '10',
      'apns-collapse-id': 'c1',
    });
    expect(sent.headers['apns-expiration']).to.equal(String(Math.floor(new Date(res.body.createdAt).getTime() / 1000) + 120));
    expect(sent.body).to.deep.equal({
      aps: { alert: { title: 'Hi', body: 'There' } },
      notificationId: res.body.id,
      topic: 'alerts',
      url: '/p',
      a: 'b',
    });
    const content = await s.send({ topic: 'content', title: 'C' });
    await s.finished(content.body.id);
    expect(world.apns.sent.filter((m) => m.token === devices[0]).pop()!.headers['apns-priority']).to.equal('5');
    expect(world.apns.connections - connectionsBefore, 'a few long-lived connections').to.be.at.most(2);
    expect(world.apns.providerTokens.size, 'one provider token reused').to.equal(1);
  });

  it('APNs provider token: one token for 20 minutes of sending, a new one after 30 (reused 20–50 minutes)', async () => {
    const s = await pushStation(world, 'apns');
    const device = unique('apns-age');
    await s.register(device);
    const bearers = () => new Set(world.apns.sent.filter((m) => m.token === device).map((m) => String(m.headers.authorization)));
    const sendOne = async () => expect((await s.finished((await s.send({ topic: 'alerts', title: 't' })).body.id)).counts.sent).to.equal(1);
    await sendOne();
    clock.advance(21 * 60_000);
    await sendOne();
    expect(bearers().size, 'the same token 21 minutes later').to.equal(1);
    clock.advance(10 * 60_000);
    await sendOne();
    expect(bearers().size, 'a new token 31 minutes after the first').to.equal(2);
    expect(world.apns.problems).to.deep.equal([]);
  });

  it('APNs: 410 and 400 BadDeviceToken → pruned; 403 InvalidProviderToken after a fresh token → failed naming it', async () => {
    const s = await pushStation(world, 'apns');
    const [gone, bad, ok] = ['gone', 'bad', 'ok'].map((l) => unique(`apns-${l}`));
    for (const d of [gone, bad, ok]) await s.register(d);
    world.apns.script = (t) => (t === gone ? 'dead' : t === bad ? 'invalid' : 'ok');
    const view = await s.finished((await s.send({ topic: 'alerts', title: 'x' })).body.id);
    expect(view.counts).to.deep.equal({ targeted: 3, sent: 1, failed: 0, pruned: 2, pending: 0 });
    expect(await deviceCount(world, s.station.id)).to.equal(1);
    world.apns.revoked = true;
    const refused = await s.finished((await s.send({ topic: 'alerts', title: 'y' })).body.id);
    expect(refused.status).to.equal('failed');
    expect(refused.error)
      .to.match(/apns/)
      .and.to.match(/403 InvalidProviderToken/);
    expect(world.apns.perDevice.get(ok)).to.equal(1 + 2); // one send, then one with a fresh token
  });

  it('Expo: batches of at most 100, tickets, receipts after the delay: DeviceNotRegistered (ticket or receipt) → pruned', async () => {
    const s = await pushStation(world, 'expo');
    const devices = Array.from({ length: 250 }, (_, i) => `ExponentPushToken[${unique('expo')}-${i}]`);
    await s.registerMany(devices);
    world.expo.script = (t) => (t === devices[0] ? 'dead' : 'ok');
    world.expo.deadOnReceipt.add(devices[1]);
    const batchesBefore = world.expo.batches.length;
    const res = await s.send({ topic: 'content', title: 'Expo', body: 'b', collapseKey: 'k', ttlSeconds: 300 });
    const message = (await eventually(() => world.expo.sent.find((m) => m.token === devices[5])))!;
    expect(message.body).to.deep.include({ title: 'Expo', body: 'b', ttl: 300, priority: 'normal', collapseId: 'k' });
    expect(message.body.data).to.deep.equal({ notificationId: res.body.id, topic: 'content' });
    const view = await eventually(
      async () => {
        const v = await s.get(res.body.id);
        return v.status === 'done' && v.counts.pruned === 2 ? v : null;
      },
      { timeoutMs: 20_000 },
    );
    expect(view.counts).to.deep.equal({ targeted: 250, sent: 248, failed: 0, pruned: 2, pending: 0 });
    expect(world.expo.batches.slice(batchesBefore).every((n) => n <= 100)).to.equal(true);
    expect(await deviceCount(world, s.station.id)).to.equal(248);
  });

  it('Expo: a 429 with Retry-After is retried; an access token refused → failed naming expo', async () => {
    const s = await pushStation(world, 'expo');
    const device = `ExponentPushToken[${unique('expo-r')}]`;
    await s.register(device);
    world.expo.requestAnswers.push({ status: 429, retryAfter: 1 });
    const view = await s.finished((await s.send({ topic: 'alerts', title: 'r' })).body.id);
    expect(view.counts.sent).to.equal(1);
    world.expo.requestAnswers.push({ status: 401 });
    const refused = await s.finished((await s.send({ topic: 'alerts', title: 'r2' })).body.id);
    expect(refused.status).to.equal('failed');
    expect(refused.error).to.match(/expo.*401/);
  });

  it('a notification not finished within its ttlSeconds ends expired; the rest count as failed', async () => {
    const s = await pushStation(world, 'fcm');
    const devices = Array.from({ length: 20 }, (_, i) => unique(`fcm-ttl-${i}`));
    await s.registerMany(devices);
    world.fcm.script = () => ({ status: 429, retryAfter: 1 });
    const res = await s.send({ topic: 'alerts', title: 'Late', ttlSeconds: 60 });
    // Past its TTL while it is being retried.
    await eventually(async () => (await s.get(res.body.id)).status === 'sending');
    clock.advance(61_000);
    const view = await s.finished(res.body.id);
    expect(view.status).to.equal('expired');
    countsAddUp(view);
    expect(view.counts.sent).to.equal(0);
    expect(view.counts.failed).to.equal(20);
  });

  it('push.finished: a webhook event with the notification view when it ends', async () => {
    const receiver = await startReceiver();
    try {
      const s = await pushStation(world, 'fcm');
      await s.register(unique('fcm-hook'));
      const hook = await admin(world.server.url, 'POST', `/stations/${s.station.id}/webhooks`, {
        url: receiver.url,
        events: ['push.finished'],
      });
      expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
      const res = await s.send({ topic: 'alerts', title: 'Hooked' });
      const event = await eventually(() => receiver.ofType('push.finished')[0], { timeoutMs: 15_000 });
      expect(event.json.data).to.include({ id: res.body.id, status: 'done' });
      expect(event.json.data.counts).to.include({ targeted: 1, sent: 1 });
    } finally {
      await receiver.close();
    }
  });
});

describe('push pacing', function () {
  this.timeout(60_000);
  let world: PushWorld;
  before(async () => (world = await startPushWorld({ PUSH_MAX_PER_SECOND: '50' })));
  after(() => world.close());

  it('PUSH_MAX_PER_SECOND per station; two stations sending at once both progress', async () => {
    const a = await pushStation(world, 'fcm');
    const b = await pushStation(world, 'fcm');
    await a.registerMany(Array.from({ length: 200 }, (_, i) => `pace-a-${a.station.id}-${i}`));
    await b.registerMany(Array.from({ length: 40 }, (_, i) => `pace-b-${b.station.id}-${i}`));
    const started = Date.now();
    const big = await a.send({ topic: 'alerts', title: 'Big' });
    const small = await b.send({ topic: 'alerts', title: 'Small' });
    const smallDone = await b.finished(small.body.id);
    const bigNow = await a.get(big.body.id);
    expect(smallDone.counts.sent).to.equal(40);
    expect(bigNow.status, 'the big one is still sending when the small one is done').to.equal('sending');
    const bigDone = await a.finished(big.body.id, 30_000);
    expect(bigDone.counts.sent).to.equal(200);
    // 200 messages at 50/s (one batch's worth may go at once) take at least ~3.5 s.
    expect(Date.now() - started).to.be.at.least(3500);
  });

  it('a paced notification ends once its last batch is out: lanes waiting for the pace do not each take a token first', async () => {
    // 50/s → batches of 10, 200 ms apart: 30 devices are 3 batches (about 0.4 s). The job's 16 lanes all
    // wait for the pace; if each had to win a token before finding nothing left to claim, the
    // notification would stay open 13 × 200 ms = 2.6 s longer.
    const station = await pushStation(world, 'fcm');
    await station.registerMany(Array.from({ length: 30 }, (_, i) => `pace-end-${station.station.id}-${i}`));
    const sent = await station.send({ topic: 'alerts', title: 'Short' });
    const done = await station.finished(sent.body.id);
    expect(done.counts.sent).to.equal(30);
    const sendingMs = Date.parse(done.finishedAt) - Date.parse(done.startedAt);
    expect(sendingMs).to.be.at.least(300);
    expect(sendingMs).to.be.below(2000);
  });
});
