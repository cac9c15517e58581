import { pushMessages } from '../../../lib/metrics.ts';
import type { Services } from '../../../services.ts';
import { loadCredentials } from '../providers/credentials.ts';
import { finishNotification } from './lifecycle.ts';
import { RETENTION_MS, type NotificationRow } from './model.ts';
import { enqueueSend } from './queue.ts';
import { expoReceipts } from '../providers/expo.ts';
import { failAbandoned } from './sending/claims.ts';

// Expo receipts, and the sweep: notifications are kept 30 days; a notification whose TTL ran out ends
// `expired` even if no job was left to notice; in-flight rows of a dead job are counted failed.

/** Fetches the receipts of an Expo notification's tickets: DeviceNotRegistered → pruned, other errors → failed. */
export async function fetchExpoReceipts(svc: Services, notificationId: string): Promise<{ checked: number }> {
  const row = await svc.db<NotificationRow>('push_notifications').where({ id: notificationId }).first();
  if (!row) return { checked: 0 };
  const creds = await loadCredentials(svc.db, svc.config.secret, row.station_id, 'expo');
  if (!creds || creds.provider !== 'expo') return { checked: 0 };
  let checked = 0;
  for (;;) {
    const rows: Array<{ seq: number; token_hash: string; ticket_id: string }> = await svc
      .db('push_deliveries')
      .where({ notification_id: row.id, state: 'sent' })
      .whereNotNull('ticket_id')
      .orderBy('seq')
      .limit(1000)
      .select('seq', 'token_hash', 'ticket_id');
    if (rows.length === 0) break;
    const receipts = await expoReceipts(
      creds,
      rows.map((r) => r.ticket_id),
      { baseUrl: svc.config.push.expoUrl, timeoutMs: svc.config.push.requestTimeoutSeconds * 1000 },
    );
    // Each checked row: its ticket is done with; DeviceNotRegistered → pruned (the device removed),
    // another error → failed, no error → still sent. One statement; seq bounds as in claims.ts' record.
    const states = rows.map((r) => {
      const error = receipts.get(r.ticket_id);
      return error === 'DeviceNotRegistered' ? 'pruned' : typeof error === 'string' ? 'failed' : 'sent';
    });
    const dead = rows.filter((_, i) => states[i] === 'pruned').map((r) => r.token_hash);
    await svc.db.raw(
      `WITH checked AS (
         UPDATE push_deliveries d SET state = v.state, ticket_id = NULL
           FROM unnest(?::int[], ?::text[]) AS v(seq, state)
          WHERE d.notification_id = ? AND d.seq = v.seq AND d.seq BETWEEN ? AND ?
       )
       DELETE FROM push_devices WHERE station_id = ? AND token_hash = ANY(?::text[])`,
      [rows.map((r) => r.seq), states, row.id, rows[0].seq, rows[rows.length - 1].seq, row.station_id, dead],
    );
    const failed = states.filter((s) => s === 'failed').length;
    if (dead.length > 0) pushMessages.labels('expo', 'pruned').inc(dead.length);
    if (failed > 0) pushMessages.labels('expo', 'failed').inc(failed);
    checked += rows.length;
  }
  return { checked };
}

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
