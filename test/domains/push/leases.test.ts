import { expect } from 'chai';
import { eventually } from '../../support/factories.ts';
import { LEASE_MS } from '../../../src/domains/push/notifications/sending/claims.ts';
import { joinSending, leaveSending } from '../../../src/domains/push/notifications/sending/leases.ts';
import type { Invalidation } from '../../../src/lib/invalidation.ts';
import { pushStation, startPushWorld, type PushWorld } from './sendHelpers.ts';

// docs/push.md, "The gate before each request": the cancel's guarantee does not rest on the bus alone. A
// process that never hears of the cancel (its message lost) stops starting requests once its permit,
// granted by a read before the cancel's commit, lapses (LEASE_MS); a claim another process took over
// (counted failed) starts nothing more.

describe('push leases: the gate without the bus', function () {
  this.timeout(30_000);
  let world: PushWorld;
  before(async () => (world = await startPushWorld({}, { workers: false })));
  after(() => world.close());

  it('a cancel never heard still stops the sender within LEASE_MS; a claim taken over stops at once', async () => {
    const svc = world.server.svc;
    const s = await pushStation(world, 'fcm');
    const res = await s.send({ topic: 'alerts', title: 'Lease' });
    const id: string = res.body.id;
    await svc.db('push_notifications').where({ id }).update({ status: 'sending', targeted: 2, claimed_seq: 2 });
    await svc.db('push_claims').insert([
      { notification_id: id, lo: 0, hi: 1 },
      { notification_id: id, lo: 1, hi: 2 },
    ]);
    // A process whose bus never delivers the push-cancel message.
    const deaf = { on: () => undefined } as unknown as Invalidation;
    const sending = joinSending({ db: svc.db, logger: svc.logger, invalidation: deaf }, { id, station_id: s.station.id, provider: 'fcm' });
    try {
      const held = sending.hold(0, performance.now());
      const other = sending.hold(1, performance.now());
      expect(sending.mayStart(held)).to.equal(true);
      // Another process took claim 1 over (its devices counted failed, the claim dropped).
      await svc.db('push_claims').where({ notification_id: id, lo: 1 }).delete();
      await sending.renew();
      expect(sending.mayStart(other), 'a claim taken over').to.equal(false);
      expect(sending.mayStart(held)).to.equal(true);
      // The cancel commits; this process is never told.
      await svc.db('push_notifications').where({ id }).update({ status: 'cancelled' });
      const committedAt = performance.now();
      const stoppedAt = await eventually(
        async () => {
          const go = sending.mayStart(held);
          if (go === false) return performance.now();
          if (go !== true) await go;
          return null;
        },
        { timeoutMs: 10_000, intervalMs: 10 },
      );
      expect((stoppedAt as number) - committedAt, 'stopped within the lease').to.be.below(LEASE_MS + 300);
      expect(sending.stopped).to.equal(true);
    } finally {
      await leaveSending({ invalidation: deaf }, sending);
    }
  });
});
