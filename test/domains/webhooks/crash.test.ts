import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { startReceiver } from '../../support/receiver.ts';
import { sharedServer } from '../../support/server.ts';
import { arrived, createHook, deliveries } from './helpers.ts';
import { requiresRedis } from '../../support/mode.ts';
import { startProcess, type RoleProcess } from '../../support/processes.ts';

// docs/webhooks.md#what-a-delivery-looks-like: at-least-once. A worker killed in the middle of a delivery loses no event:
// the job's lock runs out, another worker takes it and delivers it with the same webhook-id.

describe('webhooks: a worker killed mid-delivery', function () {
  this.timeout(60_000);

  it('delivers the event after a restart, with the same webhook-id', async function () {
    requiresRedis(this, 'a worker process of its own, killed and restarted, on a shared queue');
    const server = await sharedServer();
    let first: RoleProcess | null = startProcess(['worker']);
    const firstWorker = first;
    // The first request reaches the receiver, which holds it while the worker is killed (SIGKILL: no cleanup).
    const receiver = await startReceiver((n) => {
      if (n === 0) {
        firstWorker.child.kill('SIGKILL');
        return 'hang';
      }
      return 200;
    });
    let second: RoleProcess | null = null;
    try {
      await eventually(() => firstWorker.output().includes('workers ready'), { timeoutMs: 15_000, intervalMs: 100 });
      const station = await createStation(server.url);
      const hook = await createHook(server.url, station.id, receiver.url);
      const res = await admin(server.url, 'POST', `/stations/${station.id}/webhooks/${hook.id}/test`);
      expect(res.status).to.equal(202);
      await eventually(() => receiver.received.length === 1, { timeoutMs: 10_000 });
      await firstWorker.exited;
      first = null;
      second = startProcess(['worker']);
      await eventually(() => receiver.received.length === 2, { timeoutMs: 40_000, intervalMs: 200 });
      expect(receiver.received[1].headers['webhook-id']).to.equal(res.body.eventId);
      expect(receiver.received[1].body).to.equal(receiver.received[0].body);
      const [row] = await arrived(() => deliveries(server.url, station.id, hook.id));
      expect(row).to.include({ eventId: res.body.eventId, status: 'succeeded', httpStatus: 200 });
    } finally {
      const stillRunning = [first, second].filter((p): p is RoleProcess => p !== null);
      for (const proc of stillRunning) {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
      await receiver.close();
    }
  });
});
