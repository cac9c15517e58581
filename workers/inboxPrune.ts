import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { pruneInbox } from '../src/domains/inbox/retention.ts';

const PRUNE_ID = 'inbox.prune';

/** Registers the daily sweep (a BullMQ job scheduler: saving it again replaces it, so every worker may). */
export async function scheduleInboxPrune(svc: Services): Promise<void> {
  await svc.jobs.queue('default').upsertJobScheduler(PRUNE_ID, { pattern: '53 3 * * *' }, { name: 'inbox.prune', data: {} });
}

/** Deletes inbox messages and votes past their station's retention (docs/inbox.md, "Retention"). */
export async function inboxPrune(_payload: JobPayload<'inbox.prune'>, svc: Services) {
  return pruneInbox(svc.db, svc.clock.now());
}
