import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { eventually } from '../../support/factories.ts';
import { requiresRedis } from '../../support/mode.ts';
import { startProcess, type RoleProcess } from '../../support/processes.ts';
import { countsAddUp, pushStation, startPushWorld, type PushWorld } from '../push/sendHelpers.ts';
import { scheduleOf } from './scheduleHelpers.ts';

// docs/push.md#who-is-reminded-and-when, timing, on the real clock: the first message of a reminder is on
// the wire within 30 s of its due instant, found by the workers' own tick and fire jobs (nothing here
// fires it); and it holds at most once with two worker processes, one of them SIGKILLed while sending
// (the push rules: no device twice, counts exact).

const sha = (token: string) => createHash('sha256').update(token).digest('hex');

/** A station with `n` FCM devices following one program, and a broadcast of it starting `inMs` from now. */
async function remindedSoon(world: PushWorld, n: number, inMs: number) {
  const s = await pushStation(world, 'fcm');
  const prefix = `rem-rt-${s.station.id}-`;
  const devices = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  await s.registerMany(devices);
  const schedule = scheduleOf(world.server.url, s.station.id);
  const program = await schedule.program('Drive Time');
  for (let i = 0; i < n; i += 5000) {
    await world.server.svc.db('push_follows').insert(
      devices.slice(i, i + 5000).map((d) => ({
        station_id: s.station.id,
        token_hash: sha(d),
        position: 0,
        program_id: program,
        remind_before_minutes: 0,
      })),
    );
  }
  const dueAt = Math.ceil((Date.now() + inMs) / 1000) * 1000;
  const broadcast = await schedule.broadcast(program, new Date(dueAt));
  const mine = (tokens: string[]) => tokens.filter((t) => t.startsWith(prefix));
  const notification = () =>
    eventually(() => world.server.svc.db('push_notifications').where({ broadcast_id: broadcast }).first('id'), {
      timeoutMs: 45_000,
      intervalMs: 50,
    });
  return { ...s, devices, dueAt, broadcast, mine, notification };
}

/** FCM messages this worker counted sent (its /metrics): whether it holds a send job. */
async function sentBy(p: RoleProcess): Promise<number> {
  const port = /"port":(\d+)[^\n]*worker http listening/.exec(p.output())?.[1];
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('waveline_push_messages_total') && /provider="fcm"/.test(l) && /result="sent"/.test(l));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('reminders on the real clock', function () {
  this.timeout(90_000);
  let world: PushWorld;
  before(async () => (world = await startPushWorld()));
  after(() => world?.close());

  it('a reminder due in a few seconds goes out: its first message on the wire within 30 s of the due instant', async () => {
    const r = await remindedSoon(world, 3, 6000);
    const { id } = await r.notification();
    const view = await r.finished(id, 45_000);
    expect(view.counts).to.deep.equal({ targeted: 3, sent: 3, failed: 0, pruned: 0, pending: 0 });
    const times = world.fcm.sent.filter((m) => r.mine([m.token]).length > 0).map((m) => m.at ?? 0);
    const firstMs = Math.min(...times) - r.dueAt;
    console.log(`      first message ${firstMs} ms after the due instant`);
    expect(firstMs).to.be.at.least(0);
    expect(firstMs).to.be.below(30_000);
  });
});

describe('reminders: two workers, one killed while sending', function () {
  this.timeout(180_000);
  let world: PushWorld;
  before(async function () {
    requiresRedis(this, 'worker processes of their own on a shared queue');
    world = await startPushWorld({}, { workers: false });
    world.fcm.delayMs = 5;
    world.fcm.jitterMs = 15;
  });
  after(() => world?.close());

  it('no device twice, counts exact, done: the survivor takes over', async () => {
    const env = {
      PUSH_FCM_URL: world.fcm.url,
      PUSH_MAX_PER_SECOND: '1000',
      PUSH_CONCURRENCY: '64',
      WORKER_PORT: '0',
      NODE_EXTRA_CA_CERTS: world.ca.caFile,
    };
    const ready = (p: RoleProcess) =>
      eventually(() => p.output().includes('workers ready') && /worker http listening/.test(p.output()), {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
    const a = startProcess(['worker'], env);
    const b = startProcess(['worker'], env);
    try {
      await Promise.all([ready(a), ready(b)]);
      const r = await remindedSoon(world, 3000, 8000);
      const sent = () => r.mine(world.fcm.sent.map((m) => m.token)).length;
      await eventually(() => sent() >= 900, { timeoutMs: 60_000, intervalMs: 5 });
      // Either may hold the notification's send jobs: kill one that is sending.
      const victim = (await sentBy(a)) > 0 ? a : b;
      victim.child.kill('SIGKILL');
      await victim.exited;
      const requestsAtKill = sent();
      expect(requestsAtKill, 'still sending when the worker was killed').to.be.below(3000);
      const { id } = await r.notification();
      const view = await r.finished(id, 60_000);
      countsAddUp(view);
      expect(view.status).to.equal('done');
      expect(view.counts.targeted).to.equal(3000);
      const twice = [...world.fcm.perDevice.entries()].filter(([token, n]) => r.mine([token]).length > 0 && n > 1);
      expect(twice, 'devices sent twice').to.deep.equal([]);
      expect(view.counts.sent).to.be.at.most(r.mine(world.fcm.accepted).length);
      // One notification for the (broadcast, due time), whatever the two workers' ticks and fire jobs did.
      expect(await world.server.svc.db('push_notifications').where({ broadcast_id: r.broadcast }).pluck('id')).to.deep.equal([id]);
      console.log(`      ${JSON.stringify({ counts: view.counts, requestsAtKill })}`);
    } finally {
      for (const p of [a, b]) {
        if (p.child.exitCode === null && p.child.signalCode === null) {
          p.child.kill('SIGTERM');
          await p.exited;
        }
      }
    }
  });
});
