import { keys } from '../../../../lib/keys.ts';
import { TokenBuckets } from '../../../../lib/tokenBucket.ts';
import type { Services } from '../../../../services.ts';
import type { PushProvider } from '../../../stations/model.ts';

// PUSH_MAX_PER_SECOND per station across every worker (Expo: PUSH_EXPO_MAX_PER_SECOND): a token bucket
// per station in Redis (in-process when embedded) whose token is one batch, so a batch of 500 costs one
// Redis call, not 500. Each notification's job waits only on its own station's bucket, so one station's
// big alert never holds back another station's.

const buckets = new WeakMap<object, TokenBuckets>();

export interface Pace {
  /** Devices per batch (one token). */
  batch: number;
  /** Waits until the station may send one more batch: true, or false once `stop()` says to give up. */
  acquire(stop?: () => boolean): Promise<boolean>;
}

export function stationPace(svc: Pick<Services, 'redis' | 'config'>, stationId: string, provider: PushProvider, maxBatch: number): Pace {
  let tb = buckets.get(svc.redis);
  if (!tb) buckets.set(svc.redis, (tb = new TokenBuckets(svc.redis, keys.pushPacePrefix)));
  const bucketsOf = tb;
  const perSecond =
    provider === 'expo' ? Math.min(svc.config.push.maxPerSecond, svc.config.push.expoMaxPerSecond) : svc.config.push.maxPerSecond;
  // About five batches a second: large enough to be cheap, small enough that stations interleave.
  const batch = Math.max(1, Math.min(maxBatch, Math.floor(perSecond / 5)));
  const batchesPerMinute = (perSecond * 60) / batch;
  return {
    batch,
    async acquire(stop) {
      for (;;) {
        if (stop?.()) return false;
        // A bucket of one batch: batches at least one interval apart, never a burst above the pace.
        const take = await bucketsOf.take(keys.pushPaceBucket(stationId), batchesPerMinute, 1);
        if (take.allowed) return true;
        await new Promise((r) => setTimeout(r, Math.max(1, Math.ceil(take.retryAfterMs))));
      }
    },
  };
}
