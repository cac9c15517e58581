import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { effectiveInstant, runScheduleTick } from '../src/domains/schedule/timers.ts';

/** At a local midnight: the `schedule` row moves on a day (and `on-air` is checked); the next day is planned. */
export async function scheduleMidnight(payload: JobPayload<'schedule.midnight'>, svc: Services): Promise<{ at: string }> {
  const at = effectiveInstant(payload.at, svc.clock.now());
  await runScheduleTick(svc, payload.stationId, at);
  return { at: at.toISOString() };
}
