import { inTransaction } from '../../../lib/db.ts';
import type { Services } from '../../../services.ts';
import { emitWebhookEvent } from '../../webhooks/emit.ts';
import type { NotificationRow } from './model.ts';
import { presentNotification } from './presenter.ts';
import type { NotificationStatus } from './schemas.ts';
import { failAbandoned, LEASE_MS } from './sending/claims.ts';

// How a notification ends (docs/push.md#statuses-and-counts): done, expired or failed by its sending,
// cancelled by an operator. Whichever call moves the status sends the `push.finished` event, once.

type Svc = Pick<Services, 'db' | 'clock' | 'jobs' | 'logger' | 'webhooks'>;

/**
 * Ends a notification that is still queued or sending (`status` one of the final ones): devices not yet
 * claimed are counted failed and never sent to (those in flight get their request's outcome). True when
 * this call ended it; the `push.finished` event then goes out (once: only the call that moved the status
 * sends it).
 */
export async function finishNotification(svc: Svc, id: string, status: NotificationStatus, error: string | null = null): Promise<boolean> {
  const ended = await endNotification(svc, id, status, error);
  if (ended) await afterEnd(svc, id);
  return ended;
}

async function endNotification(svc: Pick<Services, 'db' | 'clock'>, id: string, status: NotificationStatus, error: string | null) {
  return inTransaction(svc.db, async ({ trx }) => {
    const updated = await trx('push_notifications')
      .where({ id })
      .whereIn('status', ['queued', 'sending'])
      .update({ status, error, finished_at: svc.clock.now() });
    if (updated === 0) return false;
    // Devices not claimed yet are never sent to; claimed ones get the outcome of their request.
    await trx.raw(
      `UPDATE push_deliveries d SET state = 'failed' FROM push_notifications n
       WHERE n.id = ? AND d.notification_id = n.id AND d.state = 'pending' AND d.seq > n.claimed_seq`,
      [id],
    );
    await trx('push_notifications')
      .where({ id })
      .update({ claimed_seq: trx.ref('targeted') });
    return true;
  });
}

async function afterEnd(svc: Svc, id: string): Promise<void> {
  await failAbandoned(svc, id);
  await emitFinished(svc, id);
}

/**
 * POST …/cancel. Answers only once no process will start another request of the notification: every
 * process confirms it heard the cancel (its sender checks that flag right before each request), or, when
 * one does not confirm in time, once LEASE_MS passed since the commit, when every permit to send that a
 * process was granted before the commit has lapsed (sending/leases.ts).
 */
export async function cancelNotification(svc: Svc & Pick<Services, 'invalidation'>, id: string): Promise<void> {
  const ended = await endNotification(svc, id, 'cancelled', null);
  const committedAt = performance.now();
  const status = (await svc.db('push_notifications').where({ id }).first('status'))?.status;
  if (status === 'cancelled') {
    const confirmed = await svc.invalidation.broadcast('push-cancel', id);
    const wait = committedAt + LEASE_MS + 50 - performance.now();
    if (!confirmed && wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  if (ended) await afterEnd(svc, id);
}

async function emitFinished(svc: Svc, id: string): Promise<void> {
  const row = await svc.db<NotificationRow>('push_notifications').where({ id }).first();
  if (row) await emitWebhookEvent(svc, row.station_id, 'push.finished', presentNotification(row));
}
