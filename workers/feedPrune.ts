import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { pruneFeedHistory } from '../src/feed/rows.ts';

const PRUNE_ID = 'feed.prune';

/** Registers the hourly prune (a BullMQ job scheduler: saving it again replaces it, so every worker may). */
export async function scheduleFeedPrune(svc: Services): Promise<void> {
  await svc.jobs.queue('default').upsertJobScheduler(PRUNE_ID, { pattern: '23 * * * *' }, { name: 'feed.prune', data: {} });
}

/** Drops feed tombstones older than the resume history; cursors from before them become resets. */
export async function feedPrune(_payload: JobPayload<'feed.prune'>, svc: Services): Promise<{ pruned: number }> {
  return { pruned: await pruneFeedHistory(svc.db, svc.clock.now()) };
}
