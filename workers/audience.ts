import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { pollTick, type TickResult } from '../src/domains/audience/poll.ts';
import { fixDuePlays } from '../src/domains/audience/performances.ts';
import { pruneSamples } from '../src/domains/audience/samples.ts';

/**
 * Registers the audience schedulers (BullMQ job schedulers: saving one again replaces it, so every worker
 * may, and a changed AUDIENCE_POLL_SECONDS takes effect at the next worker start).
 */
export async function scheduleAudience(svc: Services): Promise<void> {
  const everyMs = svc.config.audience.pollSeconds * 1000;
  const queue = svc.jobs.queue('default');
  // A tick that outlives its interval is not run twice at once: one scheduler, one job at a time per id.
  await queue.upsertJobScheduler('audience.poll', { every: everyMs }, { name: 'audience.poll', data: {}, opts: { attempts: 1 } });
  await queue.upsertJobScheduler('audience.fix', { every: everyMs }, { name: 'audience.fix', data: {} });
  await queue.upsertJobScheduler('audience.prune', { pattern: '47 3 * * *' }, { name: 'audience.prune', data: {} });
}

/** One poll of every stream (a failed stream is recorded, never retried by the queue: the next tick asks again). */
export async function audiencePoll(_payload: JobPayload<'audience.poll'>, svc: Services): Promise<TickResult> {
  return pollTick(svc);
}

export async function audienceFix(_payload: JobPayload<'audience.fix'>, svc: Services): Promise<{ fixed: number }> {
  return { fixed: await fixDuePlays(svc) };
}

export async function audiencePrune(_payload: JobPayload<'audience.prune'>, svc: Services): Promise<{ pruned: number }> {
  return { pruned: await pruneSamples(svc.db, svc.clock.now()) };
}
