import { inTransaction } from '../../../lib/db.ts';
import type { Services } from '../../../services.ts';
import type { NotificationRow } from './model.ts';

/**
 * queued → sending: the targets are every device of the station with the topic on, fixed now. A
 * reminder's targets were fixed when it was created, at its due instant (src/domains/reminders/fire.ts).
 */
export async function startSending(svc: Pick<Services, 'db' | 'clock'>, id: string): Promise<NotificationRow | undefined> {
  return inTransaction(svc.db, async ({ trx }) => {
    const row = await trx<NotificationRow>('push_notifications').where({ id }).forUpdate().first();
    if (!row || row.status !== 'queued') return row;
    if (row.source === 'reminder') {
      const [started] = await trx('push_notifications')
        .where({ id })
        .update({ status: 'sending', started_at: svc.clock.now() })
        .returning('*');
      return started as NotificationRow;
    }
    const topicColumn = row.topic === 'alerts' ? 'topic_alerts' : 'topic_content';
    const result = await trx.raw<{ rows: NotificationRow[] }>(
      `WITH targets AS (
         INSERT INTO push_deliveries (notification_id, token_hash, token, seq, state)
         SELECT ?, token_hash, token, row_number() OVER (), 'pending' FROM push_devices
          WHERE station_id = ? AND provider = ? AND ${topicColumn}
         RETURNING 1
       )
       UPDATE push_notifications SET status = 'sending', started_at = ?, targeted = (SELECT count(*) FROM targets)
        WHERE id = ? RETURNING *`,
      [id, row.station_id, row.provider, svc.clock.now(), id],
    );
    const started = result.rows[0];
    return started as NotificationRow;
  });
}
