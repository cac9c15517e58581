import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { sweepSchedules } from '../src/domains/schedule/timers.ts';

/** Hourly safety net: re-plans every station's schedule timers and heals a missed tick. */
export async function scheduleSweep(_payload: JobPayload<'schedule.sweep'>, svc: Services): Promise<{ stations: number }> {
  return { stations: await sweepSchedules(svc, svc.clock.now()) };
}
