import { keys } from '../../../lib/keys.ts';
import type { Redis } from '../../../lib/redis.ts';
import { TokenBuckets } from '../../../lib/tokenBucket.ts';
import { ProviderError } from './http.ts';

// Catalogues' published request policies, kept across every worker process: a token bucket in Redis
// (src/lib/tokenBucket.ts) holding ONE token, so two requests are never closer than the catalogue's
// interval, whichever process sends them. MusicBrainz: at most one request per second per client
// (https://musicbrainz.org/doc/MusicBrainz_API/Rate_Limiting). A request waits for its slot; one that
// would wait past the deadline fails as a provider error (the job is retried later).

/** Requests per minute each paced catalogue allows. */
export const CATALOGUE_RATES = { musicbrainz: 60 } as const;
export type PacedCatalogue = keyof typeof CATALOGUE_RATES;

/** Longest a request waits for its slot. */
export const PACING_DEADLINE_MS = 10_000;

const bucketsByRedis = new WeakMap<Redis, TokenBuckets>();

export type Pace = (catalogue: PacedCatalogue) => Promise<void>;

/** Waits until this process may send the next request to `catalogue` (shared through Redis). */
export function pacing(redis: Redis, deadlineMs = PACING_DEADLINE_MS): Pace {
  let buckets = bucketsByRedis.get(redis);
  if (!buckets) bucketsByRedis.set(redis, (buckets = new TokenBuckets(redis, keys.catalogueRateLimitPrefix)));
  const shared = buckets;
  return async (catalogue) => {
    const giveUpAt = Date.now() + deadlineMs;
    for (;;) {
      const take = await shared.take(catalogue, CATALOGUE_RATES[catalogue], 1);
      if (take.allowed) return;
      if (Date.now() + take.retryAfterMs > giveUpAt)
        throw new ProviderError(`${catalogue}: no request slot within ${deadlineMs} ms (its rate limit is shared by every worker)`);
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(take.retryAfterMs)));
    }
  };
}
