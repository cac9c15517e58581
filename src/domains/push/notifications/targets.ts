import type { Knex } from 'knex';
import { inTransaction, type Trx } from '../../../lib/db.ts';
import type { Services } from '../../../services.ts';
import { TOPIC_COLUMNS } from '../devices/queries.ts';
import type { NotificationRow } from './model.ts';

// A notification's targets (docs/push.md#how-sending-works-srcdomainspushnotifications): one `pending`
// delivery row per device of the station and its provider, numbered by `seq` 1…targeted, written in one
// statement that also sets `targeted`. A notification to a topic (`device_topic`) targets every device with
// the topic on when its sending starts; one to listed devices targets them when it is created (queue.ts). A
// notification about a broadcast reaches a device at most once: its delivery rows name the broadcast (unique
// with the token hash), and the devices an earlier one about it reached are left out.

/** A device not reached by an earlier notification about the broadcast. */
const NOT_REACHED = 'NOT EXISTS (SELECT 1 FROM push_deliveries r WHERE r.broadcast_id = ? AND r.token_hash = d.token_hash)';

/**
 * The devices to target: `from` names them `d` (push_devices rows), `where` narrows them; the statement
 * keeps those of the notification's station and provider.
 */
interface Selection {
  from: Knex.Raw;
  where: Knex.Raw;
}

/**
 * Writes the delivery rows of the selected devices and sets `targeted`; with `startedAt`, the
 * notification starts sending in the same statement.
 */
async function target(trx: Trx, row: NotificationRow, devices: Selection, startedAt: Date | null): Promise<NotificationRow> {
  const notReached = row.broadcast_id === null ? trx.raw('true') : trx.raw(NOT_REACHED, [row.broadcast_id]);
  const starts = startedAt === null ? '' : `status = 'sending', started_at = ?,`;
  const result = await trx.raw<{ rows: NotificationRow[] }>(
    `WITH targets AS (
       INSERT INTO push_deliveries (notification_id, token_hash, token, seq, state, broadcast_id)
       SELECT ?, d.token_hash, d.token, row_number() OVER (), 'pending', ?::uuid FROM ?
        WHERE d.station_id = ? AND d.provider = ? AND ? AND ?
       RETURNING 1
     )
     UPDATE push_notifications SET ${starts} targeted = (SELECT count(*) FROM targets) WHERE id = ? RETURNING *`,
    [
      row.id,
      row.broadcast_id,
      devices.from,
      row.station_id,
      row.provider,
      devices.where,
      notReached,
      ...(startedAt === null ? [] : [startedAt]),
      row.id,
    ],
  );
  return result.rows[0];
}

/**
 * The listed devices of a notification just created: those whose token hashes the query selects (one
 * row per device). Joined rather than `IN (…)`: the semi-join's de-duplication of 100 000 hashes cost
 * a fifth more time.
 */
export function targetListed(trx: Trx, row: NotificationRow, tokenHashes: Knex.Raw): Promise<NotificationRow> {
  const from = trx.raw('(?) listed JOIN push_devices d ON d.token_hash = listed.token_hash', [tokenHashes]);
  return target(trx, row, { from, where: trx.raw('true') }, null);
}

/**
 * queued → sending. A notification to a topic targets now every device of the station with the topic
 * on; one to listed devices had them targeted when it was created.
 */
export async function startSending(svc: Pick<Services, 'db' | 'clock'>, id: string): Promise<NotificationRow | undefined> {
  return inTransaction(svc.db, async ({ trx }) => {
    const row = await trx<NotificationRow>('push_notifications').where({ id }).forUpdate().first();
    if (!row || row.status !== 'queued') return row;
    if (row.device_topic !== null) {
      const withTopic = { from: trx.raw('push_devices d'), where: trx.raw(`d.${TOPIC_COLUMNS[row.device_topic]}`) };
      return target(trx, row, withTopic, svc.clock.now());
    }
    const [started] = await trx('push_notifications')
      .where({ id })
      .update({ status: 'sending', started_at: svc.clock.now() })
      .returning('*');
    return started as NotificationRow;
  });
}
