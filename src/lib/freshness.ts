// How old the latest reported data is (docs/now-playing.md#freshness-and-timing): shared by weather, traffic and
// now-playing so the rule lives in one place.

export type FreshnessStatus = 'fresh' | 'stale' | 'empty';

export interface Freshness {
  status: FreshnessStatus;
  thresholdSeconds: number | null;
  ageSeconds: number | null;
  observedAt: string | null;
  receivedAt: string | null;
}

export const EMPTY_FRESHNESS: Freshness = Object.freeze({
  status: 'empty',
  thresholdSeconds: null,
  ageSeconds: null,
  observedAt: null,
  receivedAt: null,
});

/**
 * `ageSeconds` is whole seconds since `observedAt` (since `receivedAt` when the observation had none);
 * `fresh` while `ageSeconds <= thresholdSeconds`, else `stale`; `empty` when nothing was ever reported.
 * A timestamp slightly ahead of the server clock counts as age 0, never negative.
 */
export function freshness(observedAt: Date | null, receivedAt: Date | null, thresholdSeconds: number, now: Date): Freshness {
  const basis = observedAt ?? receivedAt;
  if (!basis) return EMPTY_FRESHNESS;
  const ageSeconds = Math.max(0, Math.floor((now.getTime() - basis.getTime()) / 1000));
  return {
    status: ageSeconds <= thresholdSeconds ? 'fresh' : 'stale',
    thresholdSeconds,
    ageSeconds,
    observedAt: observedAt ? observedAt.toISOString() : null,
    receivedAt: receivedAt ? receivedAt.toISOString() : null,
  };
}

/**
 * The next instant (ms) at which the whole-second age since `basisMs` changes: a cached answer that
 * shows an age (or an elapsed time counted from the same moment) is exact until then.
 */
export function nextAgeTick(basisMs: number, nowMs: number): number {
  if (nowMs < basisMs) return basisMs + 1000;
  return basisMs + (Math.floor((nowMs - basisMs) / 1000) + 1) * 1000;
}
