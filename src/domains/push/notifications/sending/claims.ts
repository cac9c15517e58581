import { pushMessages } from '../../metrics.ts';
import type { Services } from '../../../../services.ts';

// Claims of a notification's devices and their outcomes (the sending loop is send.ts, the leases
// leases.ts): a batch is claimed before any request leaves, and its outcomes are written as they come
// (OutcomeWriter: at most FLUSH_MS after an answer); a process that died leaves its claims un-renewed,
// and the pending rows they held are then counted failed, never sent again.

/**
 * A claim's permit to start requests lasts this long after the read that granted it (the claim, or a
 * renewal that found the notification still sending) was issued. A cancel not confirmed by every process
 * waits this long after its commit (lifecycle.ts).
 */
export const LEASE_MS = 2000;
/** A live process renews its claims this often (leases.ts). */
export const RENEW_MS = 250;
/**
 * A claim not renewed for this long belongs to a dead process: its pending rows count failed. Longer than
 * LEASE_MS, so the holder's permit lapsed before: a process that was only slow never starts a request for
 * a device already counted failed.
 */
export const STALE_SECONDS = 4;
/** Outcomes are written at most this long after their answer came (one statement for every lane's answers). */
export const FLUSH_MS = 100;
/** …or as soon as this many are waiting. */
const FLUSH_SIZE = 500;

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
  /** Devices in the range (hi − lo), pending or not. */
  size: number;
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
  const result = await svc.db.raw<{
    rows: Array<{ lo: number; hi: number; seq: number | null; hash: string | null; token: string | null }>;
  }>(
    `WITH o AS (
       SELECT id, claimed_seq, targeted FROM push_notifications
        WHERE id = ? AND status = 'sending' AND claimed_seq < targeted FOR UPDATE
     ), r AS (
       UPDATE push_notifications p SET claimed_seq = least(o.claimed_seq + ?, o.targeted)
         FROM o WHERE p.id = o.id RETURNING p.id, o.claimed_seq AS lo, p.claimed_seq AS hi
     ), c AS (
       INSERT INTO push_claims (notification_id, lo, hi, claimed_at) SELECT id, lo, hi, now() FROM r
     )
     SELECT r.lo, r.hi, d.seq, d.token_hash AS hash, d.token FROM r
       LEFT JOIN push_deliveries d ON d.notification_id = r.id AND d.seq > r.lo AND d.seq <= r.hi AND d.state = 'pending'
      ORDER BY d.seq`,
    [id, n],
  );
  const rows = result.rows;
  if (rows.length === 0) return null;
  const devices: Claimed[] = [];
  for (const r of rows) if (r.seq !== null) devices.push({ seq: r.seq, hash: r.hash as string, token: r.token as string });
  return { lo: rows[0].lo, size: rows[0].hi - rows[0].lo, devices };
}

export interface Outcomes {
  seqs: number[];
  states: Array<'sent' | 'failed' | 'pruned'>;
  tickets: Array<string | null>;
  /** Token hashes of the dead tokens (removed from the station's devices). */
  dead: string[];
  /** How many of the `failed` were never attempted (cancelled or lost claims: not counted in the metrics). */
  unsent: number;
  /** Claims (their `lo`) whose every device has its outcome: dropped in the same statement. */
  done: number[];
}

export const noOutcomes = (): Outcomes => ({ seqs: [], states: [], tickets: [], dead: [], unsent: 0, done: [] });

/**
 * Moves pending rows to their outcomes in one statement (rows counted failed meanwhile stay so), removes
 * dead tokens from the station's devices and drops the claims that are done.
 */
export async function record(svc: Pick<Services, 'db'>, row: NotificationRef, out: Outcomes): Promise<void> {
  if (out.seqs.length === 0 && out.done.length === 0) return;
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
     DELETE FROM push_claims WHERE notification_id = ? AND lo = ANY(?::int[])`,
    // (null tickets are SQL NULLs; knex's binding type does not say arrays may hold null)
    [out.seqs, out.states, out.tickets as string[], row.id, lo, hi, row.station_id, out.dead, row.id, out.done],
  );
  let sent = 0;
  let failed = 0;
  for (const state of out.states) {
    if (state === 'sent') sent++;
    else if (state === 'failed') failed++;
  }
  if (sent > 0) pushMessages.labels(row.provider, 'sent').inc(sent);
  if (failed > out.unsent) pushMessages.labels(row.provider, 'failed').inc(failed - out.unsent);
  if (out.dead.length > 0) pushMessages.labels(row.provider, 'pruned').inc(out.dead.length);
}

export interface NotificationRef {
  id: string;
  station_id: string;
  provider: string;
}

/**
 * One process' outcome writes for one notification, shared by its lanes and jobs: outcomes are written
 * as they come, in one statement per FLUSH_MS (or FLUSH_SIZE outcomes), so a process killed loses only
 * the answers of its last flush (those count failed, as requests without an answer). One write at a
 * time; a failed write is tried again with the next.
 */
export class OutcomeWriter {
  private pending = noOutcomes();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private failures = 0;
  private readonly svc: Pick<Services, 'db' | 'logger'>;
  private readonly row: NotificationRef;

  constructor(svc: Pick<Services, 'db' | 'logger'>, row: NotificationRef) {
    this.svc = svc;
    this.row = row;
  }

  add(seq: number, state: 'sent' | 'failed' | 'pruned', ticket: string | null, deadHash: string | null, unsent = false): void {
    const p = this.pending;
    p.seqs.push(seq);
    p.states.push(state);
    p.tickets.push(ticket);
    if (deadHash !== null) p.dead.push(deadHash);
    if (unsent) p.unsent++;
    this.schedule();
  }

  /** Every device of the claim has its outcome: the claim goes with the next write. */
  claimDone(lo: number): void {
    this.pending.done.push(lo);
    this.schedule();
  }

  private schedule(): void {
    if (this.pending.seqs.length >= FLUSH_SIZE) void this.flush();
    else if (this.timer === null) this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Writes what is waiting (after the write in progress); resolves when it is written or was put back. */
  flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const out = this.pending;
    if (out.seqs.length === 0 && out.done.length === 0) return this.writing;
    this.pending = noOutcomes();
    this.writing = this.writing.then(async () => {
      try {
        await record(this.svc, this.row, out);
        this.failures = 0;
      } catch (err) {
        this.failures++;
        this.svc.logger.warn({ err, notificationId: this.row.id }, 'could not write push outcomes; trying again');
        this.putBack(out);
      }
    });
    return this.writing;
  }

  /** Writes everything; throws when the database keeps refusing (the job fails, its claims go stale). */
  async drain(): Promise<void> {
    for (let tries = 0; ; tries++) {
      await this.flush();
      if (this.pending.seqs.length === 0 && this.pending.done.length === 0) return;
      if (tries >= 5) throw new Error('push outcomes could not be written');
      await new Promise((r) => setTimeout(r, 200 * (tries + 1)));
    }
  }

  private putBack(out: Outcomes): void {
    const p = this.pending;
    p.seqs.push(...out.seqs);
    p.states.push(...out.states);
    p.tickets.push(...out.tickets);
    p.dead.push(...out.dead);
    p.unsent += out.unsent;
    p.done.push(...out.done);
    if (this.timer === null) this.timer = setTimeout(() => void this.flush(), Math.min(2000, FLUSH_MS * 2 ** this.failures));
  }
}
