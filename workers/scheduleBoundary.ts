import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { effectiveInstant, refreshScheduleFeed } from '../src/domains/schedule/timers.ts';

/** At a broadcast start or end or a planned rundown item boundary: `on-air` (and broadcast statuses in `schedule`) move on. */
export async function scheduleBoundary(payload: JobPayload<'schedule.boundary'>, svc: Services): Promise<{ at: string; changed: boolean }> {
  const at = effectiveInstant(payload.at, svc.clock.now());
  const changed = await refreshScheduleFeed(svc, payload.stationId, at);
  return { at: at.toISOString(), changed };
}
