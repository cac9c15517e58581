import { pushMessages } from '../../metrics.ts';
import type { Services } from '../../../../services.ts';
import { loadCredentials } from '../../providers/credentials.ts';
import { expoReceipts } from '../../providers/expo.ts';
import type { NotificationRow } from '../model.ts';

// Expo receipts (docs/push.md#how-sending-works-srcdomainspushnotifications): an Expo notification's tickets are checked
// PUSH_EXPO_RECEIPT_DELAY_SECONDS after its sending ended (the `push.receipts` job).

/** Queues the `push.receipts` job of a notification whose sending ended (Expo's). */
export async function scheduleReceipts(svc: Pick<Services, 'jobs' | 'config' | 'logger'>, row: NotificationRow): Promise<void> {
  await svc.jobs
    .enqueue(
      'push.receipts',
      { notificationId: row.id, stationId: row.station_id },
      { jobId: `push.receipts.${row.id}`, delay: svc.config.push.expoReceiptDelaySeconds * 1000 },
    )
    .catch((err) => svc.logger.warn({ err, notificationId: row.id }, 'could not queue the expo receipts'));
}

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
