import { pushMessages } from '../../lib/metrics.ts';
import type { Services } from '../../services.ts';

// Claims of a notification's devices and their outcomes (the sending loop is send.ts): a batch is
// claimed before any request leaves and its outcomes written after; a job that died leaves its claim
// un-refreshed, and the pending rows it held are then counted failed, never sent again.

/** A claim not refreshed for this long belongs to a dead job (live jobs refresh theirs every 3 s). */
export const STALE_SECONDS = 15;

/**
 * Counts `failed` the pending rows of the reserved part that no fresh claim covers (their job died), and
 * drops stale claims. For one notification, or (id null) every notification that ended; only those with
 * devices still pending by their counts are looked into (the sweep would otherwise read every delivery
 * row of 30 days).
 */
export async function failAbandoned(svc: Pick<Services, 'db'>, id: string | null): Promise<void> {
  const stale = `now() - interval '${STALE_SECONDS} seconds'`;
  await svc.db.raw(
    `UPDATE push_deliveries d SET state = 'failed'
     FROM push_notifications n
     WHERE d.notification_id = n.id AND ${id ? 'n.id = ?' : "n.status NOT IN ('queued', 'sending')"}
       AND n.targeted > n.sent_count + n.failed_count + n.pruned_count
       AND d.state = 'pending' AND d.seq <= n.claimed_seq
       AND NOT EXISTS (SELECT 1 FROM push_claims c WHERE c.notification_id = d.notification_id
                       AND d.seq > c.lo AND d.seq <= c.hi AND c.claimed_at > ${stale})`,
    id ? [id] : [],
  );
  const stales = svc.db('push_claims').whereRaw(`claimed_at <= ${stale}`);
  await (id ? stales.andWhere({ notification_id: id }) : stales).delete();
}

export interface Claimed {
  seq: number;
  hash: string;
  token: string;
}

export interface Claim {
  lo: number;
  devices: Claimed[];
}

/**
 * Claims the next `n` devices in one statement (so a crash claims nothing or all of it): locks the
 * notification row, reserves the range (claimed_seq, claimed_seq + n], records the claim and reads the
 * range's pending devices. The PK-ordered range costs O(n) whatever the notification's size (a LIMIT …
 * FOR UPDATE SKIP LOCKED scan slowed down with the rows already sent). Null when the notification is no
 * longer sending or every range is taken.
 */
export async function claim(svc: Pick<Services, 'db'>, id: string, n: number): Promise<Claim | null> {
  // The locked read sees the latest claimed_seq (a concurrent claim is waited for, then re-read).
  const result = await svc.db.raw<{ rows: Array<{ lo: number; seq: number | null; hash: string | null; token: string | null }> }>(
    `WITH o AS (
       SELECT id, claimed_seq, targeted FROM push_notifications
        WHERE id = ? AND status = 'sending' AND claimed_seq < targeted FOR UPDATE
     ), r AS (
       UPDATE push_notifications p SET claimed_seq = least(o.claimed_seq + ?, o.targeted)
         FROM o WHERE p.id = o.id RETURNING p.id, o.claimed_seq AS lo, p.claimed_seq AS hi
     ), c AS (
       INSERT INTO push_claims (notification_id, lo, hi, claimed_at) SELECT id, lo, hi, now() FROM r
     )
     SELECT r.lo, d.seq, d.token_hash AS hash, d.token FROM r
       LEFT JOIN push_deliveries d ON d.notification_id = r.id AND d.seq > r.lo AND d.seq <= r.hi AND d.state = 'pending'
      ORDER BY d.seq`,
    [id, n],
  );
  const rows = result.rows;
  if (rows.length === 0) return null;
  const devices: Claimed[] = [];
  for (const r of rows) if (r.seq !== null) devices.push({ seq: r.seq, hash: r.hash as string, token: r.token as string });
  return { lo: rows[0].lo, devices };
}

export interface Outcomes {
  seqs: number[];
  states: Array<'sent' | 'failed' | 'pruned'>;
  tickets: Array<string | null>;
  /** Token hashes of the dead tokens (removed from the station's devices). */
  dead: string[];
}

export const noOutcomes = (): Outcomes => ({ seqs: [], states: [], tickets: [], dead: [] });

/**
 * Moves a batch's pending rows to their outcomes in one statement (rows counted failed meanwhile stay
 * so), and removes dead tokens from the station's devices. With `doneLo`, the claim is dropped too.
 */
export async function record(
  svc: Pick<Services, 'db'>,
  row: { id: string; station_id: string; provider: string },
  out: Outcomes,
  doneLo: number | null,
): Promise<void> {
  if (out.seqs.length === 0 && doneLo === null) return;
  let lo = out.seqs[0] ?? 0;
  let hi = out.seqs[0] ?? -1;
  for (const seq of out.seqs) {
    if (seq < lo) lo = seq;
    if (seq > hi) hi = seq;
  }
  // Data-modifying CTEs all run, read or not; the trigger on push_deliveries moves the counts. The seq
  // bounds keep the plan to the batch's part of the index (the planner cannot size the unnest; without
  // them it scanned every row of the notification per batch).
  await svc.db.raw(
    `WITH moved AS (
       UPDATE push_deliveries d SET state = v.state, ticket_id = v.ticket
         FROM unnest(?::int[], ?::text[], ?::text[]) AS v(seq, state, ticket)
        WHERE d.notification_id = ? AND d.seq = v.seq AND d.seq BETWEEN ? AND ? AND d.state = 'pending'
     ), dead AS (
       DELETE FROM push_devices WHERE station_id = ? AND token_hash = ANY(?::text[])
     )
     DELETE FROM push_claims WHERE notification_id = ? AND lo = ?`,
    // (null tickets are SQL NULLs; knex's binding type does not say arrays may hold null)
    [out.seqs, out.states, out.tickets as string[], row.id, lo, hi, row.station_id, out.dead, row.id, doneLo ?? -1],
  );
  let sent = 0;
  let failed = 0;
  for (const state of out.states) {
    if (state === 'sent') sent++;
    else if (state === 'failed') failed++;
  }
  if (sent > 0) pushMessages.labels(row.provider, 'sent').inc(sent);
  if (failed > 0) pushMessages.labels(row.provider, 'failed').inc(failed);
  if (out.dead.length > 0) pushMessages.labels(row.provider, 'pruned').inc(out.dead.length);
}

export const touch = (svc: Pick<Services, 'db'>, id: string, lo: number) =>
  svc.db('push_claims').where({ notification_id: id, lo }).update({ claimed_at: svc.db.fn.now() });
