import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { requiresRedis } from '../../support/mode.ts';
import { startProcess, type RoleProcess } from '../../support/processes.ts';
import { countsAddUp, pushStation, startPushWorld, type PushWorld } from './sendHelpers.ts';

// docs/push.md#cancel: `POST …/cancel` → 200; a request not yet on the wire when the
// cancel is answered is never started, whichever worker holds its batch; requests already on the wire
// finish and are counted. The fakes hold every answer, so the requests in flight when the cancel is
// answered are known exactly: 40 devices with 4 requests in flight per lane (PUSH_CONCURRENCY 64 over 16
// lanes; a lane claims 32 devices at a time, so 8 in flight over two lanes) must end with those sent and
// the others never reaching the provider.

type Station = Awaited<ReturnType<typeof pushStation>>;

const cancel = (world: PushWorld, s: Station, id: string) =>
  admin(world.server.url, 'POST', `/stations/${s.station.id}/push/notifications/${id}/cancel`);

/** Holds every answer of the fake, sends to 40 devices, cancels with some in flight, then lets the answers go. */
async function cancelWithFourInFlight(world: PushWorld, provider: 'fcm' | 'apns') {
  const fake = world[provider];
  const s = await pushStation(world, provider);
  const prefix = `cancel-${provider}-${s.station.id}-`;
  await s.registerMany(Array.from({ length: 40 }, (_, i) => `${prefix}${i}`));
  const reached = () => fake.sent.filter((m) => m.token.startsWith(prefix)).length;
  fake.holding = true;
  try {
    const res = await s.send({ topic: 'alerts', title: 'Wrong alert' });
    expect(res.status).to.equal(202);
    // Every lane that claimed devices has its 4 requests in flight, and nothing more starts while they are held.
    let seen = -1;
    await eventually(
      () => {
        const now = reached();
        const stable = now >= 4 && now === seen;
        seen = now;
        return stable;
      },
      { timeoutMs: 20_000, intervalMs: 300 },
    );
    const cancelled = await cancel(world, s, res.body.id);
    expect(cancelled.status).to.equal(200);
    expect(cancelled.body.status).to.equal('cancelled');
    countsAddUp(cancelled.body);
    const inFlight = reached();
    expect(inFlight, 'in flight when the cancel was answered').to.equal(seen);
    expect(inFlight % 4, '4 per lane').to.equal(0);
    expect(inFlight).to.be.below(40);
    // The devices never started count failed at once, while the answers in flight are still held.
    const settled = await eventually(
      async () => {
        const v = await s.get(res.body.id);
        return v.counts.pending === inFlight ? v : null;
      },
      { timeoutMs: 5000, intervalMs: 20 },
    );
    expect(settled.counts).to.deep.equal({ targeted: 40, sent: 0, failed: 40 - inFlight, pruned: 0, pending: inFlight });
    fake.release();
    const view = await s.finished(res.body.id);
    expect(view.status).to.equal('cancelled');
    expect(view.counts).to.deep.equal({ targeted: 40, sent: inFlight, failed: 40 - inFlight, pruned: 0, pending: 0 });
    // Give a request that would still start after the answers came back every chance to arrive.
    await new Promise((r) => setTimeout(r, 300));
    expect(reached(), 'requests that reached the provider').to.equal(inFlight);
  } finally {
    fake.release();
  }
}

describe('push cancel: requests not yet started are never started', function () {
  this.timeout(60_000);
  let world: PushWorld;
  before(async () => (world = await startPushWorld({ PUSH_CONCURRENCY: '64' })));
  after(() => world.close());

  it('FCM: every answer held, 4 requests in flight per lane, cancel → 200; only those reach FCM and count sent, the rest failed', async () => {
    await cancelWithFourInFlight(world, 'fcm');
  });

  it('APNs: the same within an APNs batch', async () => {
    await cancelWithFourInFlight(world, 'apns');
  });

  it('Expo (100 messages a request, 600/s): no request starts after the cancel answered; counts add up', async () => {
    const s = await pushStation(world, 'expo');
    const prefix = `ExponentPushToken[cancel-${s.station.id}-`;
    await s.registerMany(Array.from({ length: 500 }, (_, i) => `${prefix}${i}]`));
    const reached = () => world.expo.sent.filter((m) => m.token.startsWith(prefix)).length;
    world.expo.holding = true;
    try {
      const res = await s.send({ topic: 'alerts', title: 'Wrong alert' });
      await eventually(() => reached() >= 100, { timeoutMs: 20_000, intervalMs: 5 });
      const cancelled = await cancel(world, s, res.body.id);
      expect(cancelled.status).to.equal(200);
      const atAnswer = reached();
      expect(atAnswer % 100, 'whole requests of 100').to.equal(0);
      expect(atAnswer, 'requests were still to start when the cancel was answered').to.be.below(500);
      world.expo.release();
      const view = await s.finished(res.body.id);
      expect(view.status).to.equal('cancelled');
      await new Promise((r) => setTimeout(r, 300));
      expect(reached(), 'no request started after the cancel was answered').to.equal(atAnswer);
      expect(view.counts).to.deep.equal({ targeted: 500, sent: atAnswer, failed: 500 - atAnswer, pruned: 0, pending: 0 });
    } finally {
      world.expo.release();
    }
  });
});

describe('push cancel across processes: the worker holding the batch is another process', function () {
  this.timeout(90_000);
  let world: PushWorld;
  let worker: RoleProcess | null = null;
  before(async function () {
    requiresRedis(this, 'a worker process of its own, told of the cancel through Redis');
    world = await startPushWorld({}, { workers: false });
    worker = startProcess(['worker'], {
      PUSH_FCM_URL: world.fcm.url,
      PUSH_CONCURRENCY: '64',
      WORKER_PORT: '0',
      NODE_EXTRA_CA_CERTS: world.ca.caFile,
    });
    const started = worker;
    await eventually(() => started.output().includes('workers ready'), { timeoutMs: 30_000, intervalMs: 100 });
  });
  after(async () => {
    if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await world?.close();
  });

  it('FCM: cancel answered by the web process; the worker process starts none of the requests left', async () => {
    await cancelWithFourInFlight(world, 'fcm');
  });
});
