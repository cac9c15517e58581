import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { sweepNotifications } from '../../../src/domains/push/notifications/maintenance.ts';
import { countsAddUp, pushStation, startPushWorld, type PushWorld } from './sendHelpers.ts';

// docs/push.md#credentials, docs/push.md#counts-providers-and-upkeep: sandbox APNs keys go to
// PUSH_APNS_SANDBOX_URL; notifications are kept 30 days; a notification past its TTL ends expired even when
// no job is left to notice.

describe('push: APNs sandbox and the sweep', function () {
  this.timeout(60_000);
  let world: PushWorld;
  // Production APNs points nowhere: only the sandbox URL reaches the fake.
  before(async () => (world = await startPushWorld({ PUSH_APNS_URL: 'https://127.0.0.1:9' })));
  after(() => world.close());

  it('an APNs key whose environment is sandbox is sent to PUSH_APNS_SANDBOX_URL', async () => {
    const s = await pushStation(world, 'apns');
    const { keyId, teamId, bundleId, privateKey } = world.apns.key;
    const put = await admin(world.server.url, 'PUT', `/stations/${s.station.id}/push/credentials`, {
      provider: 'apns',
      keyId,
      teamId,
      bundleId,
      privateKey,
      environment: 'sandbox',
    });
    expect(put.body.environment).to.equal('sandbox');
    const device = `apns-sandbox-${Math.random().toString(36).slice(2)}`;
    await s.register(device);
    const view = await s.finished((await s.send({ topic: 'alerts', title: 'Sandbox' })).body.id);
    expect(view.counts.sent).to.equal(1);
    expect(world.apns.perDevice.get(device)).to.equal(1);
  });

  it('the sweep removes notifications older than 30 days and ends those past their TTL as expired', async () => {
    const s = await pushStation(world, 'fcm');
    const db = world.server.svc.db;
    const old = await s.send({ topic: 'alerts', title: 'Old' });
    await s.finished(old.body.id);
    await db('push_notifications')
      .where({ id: old.body.id })
      .update({ created_at: new Date(Date.now() - 31 * 24 * 3600_000) });
    // A queued notification whose TTL ran out while no worker took it.
    const [stale] = await db('push_notifications')
      .insert({
        id: crypto.randomUUID(),
        station_id: s.station.id,
        provider: 'fcm',
        topic: 'alerts',
        source: 'admin',
        title: 'Stale',
        data: '{}',
        ttl_seconds: 60,
        status: 'queued',
        created_at: new Date(Date.now() - 120_000),
      })
      .returning('id');
    const result = await sweepNotifications(world.server.svc);
    expect(result.removed).to.be.at.least(1);
    expect((await admin(world.server.url, 'GET', `/stations/${s.station.id}/push/notifications/${old.body.id}`)).status).to.equal(404);
    const view = await s.get(stale.id);
    expect(view.status).to.equal('expired');
    countsAddUp(view);
  });
});

describe('push: the FCM access token is fetched again near its expiry', function () {
  this.timeout(60_000);
  let world: PushWorld;
  // Tokens valid 4 minutes: inside the 5-minute margin, so each use needs a fresh one.
  before(async () => (world = await startPushWorld({}, { fcmTokenSeconds: 240 })));
  after(() => world.close());

  it('a token about to expire is not reused', async () => {
    const s = await pushStation(world, 'fcm');
    await s.register(`fcm-expiring-${Math.random().toString(36).slice(2)}`);
    await s.finished((await s.send({ topic: 'alerts', title: 'One' })).body.id);
    const after1 = world.fcm.issued.length;
    await s.finished((await s.send({ topic: 'alerts', title: 'Two' })).body.id);
    expect(after1).to.be.at.least(1);
    expect(world.fcm.issued.length).to.be.above(after1);
  });
});
