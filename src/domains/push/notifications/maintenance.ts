import type { Services } from '../../../services.ts';
import { finishNotification } from './lifecycle.ts';
import { RETENTION_MS, type NotificationRow } from './model.ts';
import { enqueueSend } from './queue.ts';
import { failAbandoned } from './sending/claims.ts';

// The sweep: notifications are kept 30 days; a notification whose TTL ran out ends `expired` even if no
// job was left to notice; in-flight rows of a dead job are counted failed.

/** The periodic sweep (`push.sweep`). */
export async function sweepNotifications(svc: Services): Promise<{ removed: number; expired: number }> {
  const now = svc.clock.now();
  const removed = await svc
    .db('push_notifications')
    .where('created_at', '<', new Date(now.getTime() - RETENTION_MS))
    .delete();
  const open: NotificationRow[] = await svc.db('push_notifications').whereIn('status', ['queued', 'sending']);
  let expired = 0;
  for (const row of open) {
    if (now.getTime() >= row.created_at.getTime() + row.ttl_seconds * 1000) {
      if (await finishNotification(svc, row.id, 'expired')) expired++;
    } else if (row.status === 'queued' && now.getTime() - row.created_at.getTime() > 60_000) {
      await enqueueSend(svc, row); // its job could not be queued, or was lost
    }
  }
  // Finished notifications whose dead jobs left claimed devices pending.
  await failAbandoned(svc, null);
  return { removed, expired };
}

const sweepRegistered = new WeakSet<object>();

/** Registers the repeatable sweep once per process (the worker role). */
export async function ensurePushSweep(svc: Services): Promise<void> {
  if (sweepRegistered.has(svc.jobs)) return;
  await svc.jobs.queue('push').upsertJobScheduler('push.sweep', { every: 5 * 60_000 }, { name: 'push.sweep', data: {} });
  sweepRegistered.add(svc.jobs);
}
