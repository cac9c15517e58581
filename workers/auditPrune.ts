import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { pruneAuditLog } from '../src/domains/audit/store.ts';

const PRUNE_ID = 'audit.prune';

/** Registers the daily sweep (a BullMQ job scheduler: saving it again replaces it, so every worker may). */
export async function scheduleAuditPrune(svc: Services): Promise<void> {
  await svc.jobs.queue('default').upsertJobScheduler(PRUNE_ID, { pattern: '41 3 * * *' }, { name: 'audit.prune', data: {} });
}

/** Drops audit entries older than the retention (400 days: docs/operations.md#the-audit-log). */
export async function auditPrune(_payload: JobPayload<'audit.prune'>, svc: Services): Promise<{ pruned: number }> {
  return { pruned: await pruneAuditLog(svc.db, svc.clock.now()) };
}
