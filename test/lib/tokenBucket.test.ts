import { loadConfig } from '../../src/config.ts';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createBlockingRedis } from '../../src/lib/redis.ts';
import { gcra, TokenBuckets } from '../../src/lib/tokenBucket.ts';
import { eventually } from '../support/factories.ts';

// docs/errors.md#rate-limits: rate limits are token buckets — a bucket of the per-minute limit, refilled continuously.

describe('token buckets (rate limits)', () => {
  describe('the algorithm (gcra)', () => {
    it('lets a full bucket through at once, then one take per refill interval', () => {
      let tat: number | null = null;
      const now = 1_000_000;
      for (let i = 0; i < 6; i++) {
        const step = gcra(tat, now, 6); // 6 a minute: a token every 10 s
        expect(step.take).to.include({ allowed: true, remaining: 5 - i });
        tat = step.tat;
      }
      const refused = gcra(tat, now, 6);
      expect(refused.take.allowed).to.equal(false);
      expect(refused.take.retryAfterMs).to.be.closeTo(10_000, 1e-6);
      expect(refused.tat).to.equal(null);
      // 25 s later two tokens are back, not a whole bucket.
      const later = now + 25_000;
      const first = gcra(tat, later, 6);
      expect(first.take).to.include({ allowed: true, remaining: 1 });
      const second = gcra(first.tat, later, 6);
      expect(second.take).to.include({ allowed: true, remaining: 0 });
      const third = gcra(second.tat, later, 6);
      expect(third.take.allowed).to.equal(false);
      expect(third.take.retryAfterMs).to.be.closeTo(5_000, 1e-6);
      // A minute of quiet fills it again, never beyond its size.
      const rested = gcra(second.tat, later + 600_000, 6);
      expect(rested.take).to.include({ allowed: true, remaining: 5 });
    });
  });

  it('grants a bucket of one at Unix-ms magnitudes with a fractional interval (float slack)', () => {
    const now = 1_795_655_000_123.456;
    const first = gcra(null, now, 360, 1);
    expect(first.take.allowed).to.equal(true);
    expect(gcra(first.tat, now + 1, 360, 1).take.allowed).to.equal(false);
    expect(gcra(first.tat, now + 60_000 / 360, 360, 1).take.allowed).to.equal(true);
  });

  describe('in Redis (TokenBuckets)', () => {
    let redis: Redis;
    before(() => {
      redis = createBlockingRedis(loadConfig().redis);
    });
    after(() => redis.disconnect());

    it('empties after the per-minute limit, refuses with the time to the next token, and refills one token per interval', async () => {
      const buckets = new TokenBuckets(redis, 'test:tb');
      const key = randomUUID();
      const remaining: number[] = [];
      for (let i = 0; i < 120; i++) {
        const take = await buckets.take(key, 120); // a token every 500 ms
        expect(take.allowed).to.equal(true);
        remaining.push(take.remaining);
      }
      expect(remaining.slice(0, 3)).to.deep.equal([119, 118, 117]);
      expect(remaining.at(-1)).to.equal(0);
      const refused = await buckets.take(key, 120);
      expect(refused.allowed).to.equal(false);
      expect(refused.retryAfterMs).to.be.greaterThan(0).and.at.most(500);
      expect(refused.fullInMs).to.be.greaterThan(59_000).and.at.most(60_000);
      // A fixed one-minute window would refuse for up to a minute; the bucket has a token within 500 ms.
      const again = await eventually(async () => ((await buckets.take(key, 120)).allowed ? true : null), { timeoutMs: 5_000 });
      expect(again).to.equal(true);
      // …and only one: the next take right away is refused again.
      expect((await buckets.take(key, 120)).allowed).to.equal(false);
      // Buckets are separate per key.
      expect((await buckets.take(randomUUID(), 120)).remaining).to.equal(119);
    });

    it('a bucket of one with a fractional interval (360 a minute: 166.67 ms) grants its first take and one per interval after', async () => {
      // Times are Unix milliseconds (~1.8e12), where a double's step is ~0.0002 ms: `now + interval - now`
      // is not exactly `interval`, and a bucket of one used to refuse its very first take, forever.
      const buckets = new TokenBuckets(redis, 'test:tb');
      for (let i = 0; i < 20; i++) expect((await buckets.take(randomUUID(), 360, 1)).allowed, `fresh key ${i}`).to.equal(true);
      const key = randomUUID();
      expect((await buckets.take(key, 360, 1)).allowed).to.equal(true);
      expect((await buckets.take(key, 360, 1)).allowed).to.equal(false);
      const next = await eventually(async () => ((await buckets.take(key, 360, 1)).allowed ? true : null), { timeoutMs: 2_000 });
      expect(next).to.equal(true);
    });

    it('keeps counting in memory while Redis cannot answer', async () => {
      const broken = new Redis('redis://127.0.0.1:1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      });
      try {
        const buckets = new TokenBuckets(broken, 'test:tb');
        const key = randomUUID();
        expect((await buckets.take(key, 2)).allowed).to.equal(true);
        expect((await buckets.take(key, 2)).allowed).to.equal(true);
        const refused = await buckets.take(key, 2);
        expect(refused.allowed).to.equal(false);
        expect(refused.retryAfterMs).to.be.greaterThan(29_000).and.at.most(30_000);
      } finally {
        broken.disconnect();
      }
    });
  });
});
