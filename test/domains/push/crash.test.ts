import { expect } from 'chai';
import { eventually } from '../../support/factories.ts';
import { requiresRedis } from '../../support/mode.ts';
import { startProcess, type RoleProcess } from '../../support/processes.ts';
import { countsAddUp, pushStation, startPushWorld, type PushWorld } from './sendHelpers.ts';

// decisions.md, "Push notifications", targets: each device receives a notification at most once, also
// when a worker dies or the notification is sent from several workers at once (a device whose request got
// no answer is counted failed, never re-sent). Two worker processes share a notification; one is killed
// (SIGKILL) in the middle of its batch; the fake counts requests per device.

describe('push: two workers, one killed mid-batch', function () {
  this.timeout(120_000);
  let world: PushWorld;
  before(async function () {
    requiresRedis(this, 'worker processes of their own on a shared queue');
    world = await startPushWorld({}, { workers: false });
  });
  after(() => world?.close());

  it('no device gets a second copy; the killed worker’s in-flight devices count failed; the rest are sent', async () => {
    const env = {
      PUSH_FCM_URL: world.fcm.url,
      PUSH_MAX_PER_SECOND: '200',
      WORKER_LOCK_SECONDS: '5',
      WORKER_PORT: '0',
      NODE_EXTRA_CA_CERTS: world.ca.caFile,
    };
    // A takes both jobs of the notification; B starts while A sends and must finish A's work after A is killed.
    const a = startProcess(['worker'], env);
    let b: RoleProcess | null = null;
    try {
      await eventually(() => a.output().includes('workers ready'), { timeoutMs: 20_000, intervalMs: 100 });
      const s = await pushStation(world, 'fcm');
      const devices = Array.from({ length: 2000 }, (_, i) => `crash-${s.station.id}-${i}`);
      await s.registerMany(devices);
      world.fcm.delayMs = 40;
      const res = await s.send({ topic: 'alerts', title: 'Crash test' });
      expect(res.status).to.equal(202);
      await eventually(() => world.fcm.sent.length >= 100, { timeoutMs: 20_000, intervalMs: 10 });
      b = startProcess(['worker'], env);
      const started = b;
      await eventually(() => started.output().includes('workers ready'), { timeoutMs: 20_000, intervalMs: 100 });
      expect((await s.get(res.body.id)).status, 'still sending when A is killed').to.equal('sending');
      a.child.kill('SIGKILL');
      await a.exited;
      const view = await s.finished(res.body.id, 90_000);
      expect(view.status).to.equal('done');
      countsAddUp(view);
      const perDevice = [...world.fcm.perDevice.entries()].filter(([token]) => token.startsWith(`crash-${s.station.id}`));
      const twice = perDevice.filter(([, n]) => n > 1);
      expect(twice, 'devices sent twice').to.deep.equal([]);
      expect(view.counts.targeted).to.equal(2000);
      // Every device was either sent (answered), or counted failed (in flight when the worker died).
      expect(view.counts.sent + view.counts.failed).to.equal(2000);
      expect(view.counts.failed, 'the devices A had in flight').to.be.at.least(1);
      expect(view.counts.sent).to.be.at.least(1000);
      expect(perDevice.length, 'requests reached the fake').to.be.at.least(view.counts.sent);
    } finally {
      world.fcm.delayMs = 0;
      for (const p of [a, b]) {
        if (p && p.child.exitCode === null && p.child.signalCode === null) {
          p.child.kill('SIGTERM');
          await p.exited;
        }
      }
    }
  });
});
