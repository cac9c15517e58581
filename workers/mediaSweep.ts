import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { sweepExpiredUploads, type SweepResult } from '../src/domains/media/sweep.ts';

const SWEEP_ID = 'media.sweep';

/** Registers the hourly sweep (a BullMQ job scheduler: saving it again replaces it, so every worker may). */
export async function scheduleMediaSweep(svc: Services): Promise<void> {
  await svc.jobs.queue('default').upsertJobScheduler(SWEEP_ID, { pattern: '41 * * * *' }, { name: 'media.sweep', data: {} });
}

/** Removes expired pre-signed uploads: the bytes and row of those never completed (docs/media.md#the-sweep). */
export async function mediaSweep(_payload: JobPayload<'media.sweep'>, svc: Services): Promise<SweepResult> {
  return sweepExpiredUploads(svc, svc.clock.now());
}
