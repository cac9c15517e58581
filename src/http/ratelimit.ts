import type { Config } from '../config.ts';
import { keys } from '../lib/keys.ts';
import { metricsEnabled, rateLimitRefusals } from '../lib/metrics.ts';
import { RateLimitedError } from '../lib/errors.ts';
import type { Redis } from '../lib/redis.ts';
import { TokenBuckets } from '../lib/tokenBucket.ts';

// The per-credential (or per-IP) token buckets (docs/errors.md#rate-limits), shared by every web node through Redis
// (src/lib/tokenBucket.ts); in memory while Redis is unreachable, so a Redis outage never fails a read.

export type LimitName = keyof Config['rateLimits'];

/** Where the RateLimit headers go: a Koa context, or a bare response wrapped by reads.ts. */
export interface HeaderTarget {
  set(field: string, value: string): void;
}

export class RateLimits {
  private readonly buckets: TokenBuckets;
  private readonly perMinute: Config['rateLimits'];
  constructor(redis: Redis, perMinute: Config['rateLimits']) {
    this.perMinute = perMinute;
    this.buckets = new TokenBuckets(redis, keys.rateLimitPrefix);
  }

  enabled(name: LimitName): boolean {
    return this.perMinute[name] > 0;
  }

  /**
   * Takes one token from the bucket of `key`; sets the RateLimit headers (IETF httpapi draft: `r` the
   * tokens left, `t` the seconds until the bucket is full again — on a refusal, until the next token);
   * throws RATE_LIMITED with Retry-After when the bucket is empty.
   */
  async take(ctx: HeaderTarget, name: LimitName, key: string): Promise<void> {
    const limit = this.perMinute[name];
    if (limit <= 0) return;
    const take = await this.buckets.take(`${name}:${key}`, limit);
    ctx.set('RateLimit-Policy', `"${name}";q=${limit};w=60`);
    if (take.allowed) {
      ctx.set('RateLimit', `"${name}";r=${take.remaining};t=${Math.ceil(take.fullInMs / 1000)}`);
      return;
    }
    this.refuse(ctx, name, take.retryAfterMs);
  }

  /**
   * Refuses (as `take` does) when the bucket of `key` is empty, without taking a token: for limits
   * counted only on some outcomes (failed admin authentications), checked before the request runs.
   */
  async refuseWhenEmpty(ctx: HeaderTarget, name: LimitName, key: string): Promise<void> {
    const limit = this.perMinute[name];
    if (limit <= 0) return;
    const waitMs = await this.buckets.emptyFor(`${name}:${key}`, limit);
    if (waitMs > 0) {
      ctx.set('RateLimit-Policy', `"${name}";q=${limit};w=60`);
      this.refuse(ctx, name, waitMs);
    }
  }

  private refuse(ctx: HeaderTarget, name: LimitName, retryAfterMs: number): never {
    const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
    ctx.set('RateLimit', `"${name}";r=0;t=${retryAfter}`);
    ctx.set('Retry-After', String(retryAfter));
    if (metricsEnabled()) rateLimitRefusals.labels(name).inc();
    throw new RateLimitedError(retryAfter);
  }
}
