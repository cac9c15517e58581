import type { Services } from '../../services.ts';

// Claims of a notification's devices (src/domains/push/send.ts): a job that died leaves its claim
// un-refreshed; the pending rows it held are then counted failed, never sent again.

/** A claim not refreshed for this long belongs to a dead job (live jobs refresh theirs every 3 s). */
export const STALE_SECONDS = 15;

/**
 * Counts `failed` the pending rows of the reserved part that no fresh claim covers (their job died), and
 * drops stale claims. For one notification, or (id null) every notification that ended.
 */
export async function failAbandoned(svc: Pick<Services, 'db'>, id: string | null): Promise<void> {
  const stale = `now() - interval '${STALE_SECONDS} seconds'`;
  await svc.db.raw(
    `UPDATE push_deliveries d SET state = 'failed'
     FROM push_notifications n
     WHERE d.notification_id = n.id AND ${id ? 'n.id = ?' : "n.status NOT IN ('queued', 'sending')"}
       AND d.state = 'pending' AND d.seq <= n.claimed_seq
       AND NOT EXISTS (SELECT 1 FROM push_claims c WHERE c.notification_id = d.notification_id
                       AND d.seq > c.lo AND d.seq <= c.hi AND c.claimed_at > ${stale})`,
    id ? [id] : [],
  );
  const stales = svc.db('push_claims').whereRaw(`claimed_at <= ${stale}`);
  await (id ? stales.andWhere({ notification_id: id }) : stales).delete();
}
