import rateLimiterFlexible from 'rate-limiter-flexible';
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { keys } from '../lib/keys.ts';
import { RateLimitedError } from '../lib/errors.ts';
import type { Redis } from '../lib/redis.ts';

// rate-limiter-flexible keeps shared counters in Redis with one atomic script per request and falls
// back to in-memory limits when Redis is unreachable, so a Redis outage never fails a listener read.
const { RateLimiterRedis, RateLimiterMemory } = rateLimiterFlexible;

export type LimitName = keyof Config['rateLimits'];

export class RateLimits {
  private readonly limiters = new Map<LimitName, RateLimiterAbstract>();
  private readonly perMinute: Config['rateLimits'];
  constructor(redis: Redis, perMinute: Config['rateLimits']) {
    this.perMinute = perMinute;
    for (const name of Object.keys(perMinute) as LimitName[]) {
      const points = perMinute[name];
      if (points <= 0) continue;
      this.limiters.set(
        name,
        new RateLimiterRedis({
          storeClient: redis,
          keyPrefix: `${keys.rateLimitPrefix}:${name}`,
          points,
          duration: 60,
          insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }),
        }),
      );
    }
  }

  enabled(name: LimitName): boolean {
    return this.limiters.has(name);
  }

  /** Takes one request from the bucket of `key`; sets the RateLimit headers; throws RATE_LIMITED when empty. */
  async take(ctx: Context, name: LimitName, key: string): Promise<void> {
    const limiter = this.limiters.get(name);
    if (!limiter) return;
    const limit = this.perMinute[name];
    const policy = `"${name}";q=${limit};w=60`;
    try {
      const res = await limiter.consume(key, 1);
      ctx.set('RateLimit-Policy', policy);
      ctx.set('RateLimit', `"${name}";r=${res.remainingPoints};t=${Math.ceil(res.msBeforeNext / 1000)}`);
    } catch (rejection) {
      if (rejection instanceof Error) throw rejection;
      const res = rejection as RateLimiterRes;
      const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      ctx.set('RateLimit-Policy', policy);
      ctx.set('RateLimit', `"${name}";r=0;t=${retryAfter}`);
      ctx.set('Retry-After', String(retryAfter));
      throw new RateLimitedError(retryAfter);
    }
  }
}
