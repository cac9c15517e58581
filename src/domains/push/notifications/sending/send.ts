import { inTransaction } from '../../../../lib/db.ts';
import { pushMessages } from '../../../../lib/metrics.ts';
import type { Services } from '../../../../services.ts';
import { loadCredentials, type PushCredentials } from '../../providers/credentials.ts';
import { finishNotification } from '../lifecycle.ts';
import { countsOf, expiresAt, FINAL_STATUSES, SEND_PARTS, type NotificationRow } from '../model.ts';
import { stationPace } from './pacing.ts';
import { claim, failAbandoned, type Claim, type Claimed } from './claims.ts';
import { joinSending, leaveSending, type HeldClaim, type Sending } from './leases.ts';

interface Held {
  claim: Claim;
  lease: HeldClaim;
  /** Counted failed by a stop before its delivery began. */
  settled: boolean;
  unlisten: () => void;
}
import { apnsSender } from '../../providers/apns.ts';
import { expoSender } from '../../providers/expo.ts';
import { fcmSender } from '../../providers/fcm.ts';
import { CredentialsRefusedError, type Outcome, type PushMessage, type PushSender } from '../../providers/types.ts';

// Sending one notification (a `push.send` job; SEND_PARTS of them share each notification, in one
// worker or several). At most once per device: a batch is claimed by reserving the next range of the
// delivery rows' `seq` (`claimed_seq` on the notification row) and recording it in `push_claims`, in one
// transaction, before any request leaves; ranges never overlap, so no other job can take those devices.
// A live process renews its claims (leases.ts), and asks its lease right before each request (a cancel,
// or a claim taken over, stops it). A `pending` row inside the reserved part that no fresh claim covers
// belonged to a process that died (SIGKILL, lost host): it is counted `failed`, never sent again.
// Outcomes are written as they come, by the process' OutcomeWriter (claims.ts).

/** Claim-send-record loops per job: while one lane waits on the database, the others send. */
const LANES = 8;
const MAX_ATTEMPTS = 5;
/** A lane claims this many rounds of its in-flight requests at a time (docs/push.md, worker deaths). */
const CLAIM_ROUNDS = 8;
const MAX_RETRY_WAIT_MS = 5 * 60_000;

type Svc = Services;

/**
 * Notifications with nothing left to claim, as this process learnt it: its other lanes and jobs stop at
 * once instead of each waiting for a pace token only to find the claim empty (16 lanes at Expo's pace of
 * six batches a second held a finished notification open for 2.7 s). Bounded: ids of long-finished
 * notifications are forgotten.
 */
const drained = new Set<string>();
function markDrained(id: string): void {
  if (drained.size >= 10_000) drained.clear();
  drained.add(id);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function senderFor(svc: Pick<Services, 'config' | 'clock'>, creds: PushCredentials): PushSender {
  const timeoutMs = svc.config.push.requestTimeoutSeconds * 1000;
  if (creds.provider === 'fcm') return fcmSender(creds, { baseUrl: svc.config.push.fcmUrl, timeoutMs });
  if (creds.provider === 'apns') {
    const baseUrl = creds.environment === 'sandbox' ? svc.config.push.apnsSandboxUrl : svc.config.push.apnsUrl;
    return apnsSender(creds, { baseUrl, timeoutMs, now: () => svc.clock.now().getTime() });
  }
  return expoSender(creds, { baseUrl: svc.config.push.expoUrl, timeoutMs });
}

function messageOf(row: NotificationRow): PushMessage {
  return {
    notificationId: row.id,
    topic: row.topic,
    title: row.title,
    body: row.body,
    url: row.url,
    data: row.data,
    ttlSeconds: row.ttl_seconds,
    collapseKey: row.collapse_key,
    expiresAtUnix: Math.floor(expiresAt(row) / 1000),
  };
}

/**
 * queued → sending: the targets are every device of the station with the topic on, fixed now. A
 * reminder's targets were fixed when it was created, at its due instant (src/domains/reminders/fire.ts).
 */
async function start(svc: Svc, id: string): Promise<NotificationRow | undefined> {
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

/** Sleeps `ms`, or less once `stop()` says so. */
async function sleepUnless(ms: number, stop: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (!stop() && Date.now() < until) await sleep(Math.min(100, until - Date.now()));
}

/**
 * Sends one claimed batch, writing each device's outcome as it comes; 429/5xx are retried (honouring
 * Retry-After) up to MAX_ATTEMPTS. When the notification stops (cancel), every device whose request was
 * not started is counted failed at once; those in flight get their answer.
 */
async function deliver(
  svc: Svc,
  row: NotificationRow,
  sender: PushSender,
  sending: Sending,
  claim: Claim,
  held: HeldClaim,
  concurrency: number,
  allStarted: () => void,
) {
  const writer = sending.writer;
  const message = messageOf(row);
  // The devices of the current attempt: which were started, which have their outcome.
  let batch: Claimed[] = [];
  let started: boolean[] = [];
  let settled: boolean[] = [];
  const attempt = (devices: Claimed[]) => {
    startedCount = 0;
    batch = devices;
    started = devices.map(() => false);
    settled = devices.map(() => false);
  };
  const settle = (i: number, state: 'sent' | 'failed' | 'pruned', ticket: string | null, unsent: boolean) => {
    if (settled[i]) return;
    settled[i] = true;
    // A dead token is removed from the station's devices (it is `pruned`, not also `sent`).
    writer.add(batch[i].seq, state, ticket, state === 'pruned' ? batch[i].hash : null, unsent);
  };
  const settleRest = (unsent: (i: number) => boolean) => {
    for (let i = 0; i < batch.length; i++) settle(i, 'failed', null, unsent(i));
  };
  let startedCount = 0;
  const gate = (first: number, count: number) => {
    const go = sending.mayStart(held);
    if (go === true) {
      for (let i = first; i < first + count; i++) if (!started[i]) ((started[i] = true), startedCount++);
      if (startedCount === batch.length) allStarted();
    }
    return go;
  };
  const stopListening = sending.onStop(() => {
    for (let i = 0; i < batch.length; i++) if (!started[i]) settle(i, 'failed', null, true);
    void writer.flush();
  });
  attempt(claim.devices);
  try {
    for (let n = 1; batch.length > 0; n++) {
      if (sending.stopped) {
        settleRest(() => true);
        break;
      }
      const retry: Claimed[] = [];
      let waitMs = 0;
      const onOutcome = (i: number, o: Outcome) => {
        if (o.result === 'retry') {
          settled[i] = true;
          retry.push(batch[i]);
          waitMs = Math.max(waitMs, o.retryAfterMs ?? 0);
        } else if (o.result === 'unsent') settle(i, 'failed', null, true);
        else settle(i, o.result, o.result === 'sent' ? (o.ticketId ?? null) : null, false);
      };
      try {
        await sender.send(
          batch.map((c) => c.token),
          message,
          { concurrency, gate, onOutcome },
        );
      } catch (err) {
        // Refused credentials: what has no outcome yet failed (never started, or without an answer).
        settleRest((i) => !started[i]);
        throw err;
      }
      const retryAt = Date.now() + Math.min(MAX_RETRY_WAIT_MS, Math.max(waitMs, 500 * 2 ** (n - 1)));
      const giveUp = n >= MAX_ATTEMPTS || retryAt > expiresAt(row) - (svc.clock.now().getTime() - Date.now());
      attempt(retry);
      if (retry.length > 0 && giveUp) settleRest(() => false);
      else if (retry.length > 0) {
        pushMessages.labels(row.provider, 'retried').inc(retry.length);
        await sleepUnless(retryAt - Date.now(), () => sending.stopped);
      }
    }
  } catch (err) {
    if (!(err instanceof CredentialsRefusedError)) throw err;
    await writer.flush();
    await finishNotification(svc, row.id, 'failed', err.message);
    svc.logger.warn(
      { notificationId: row.id, stationId: row.station_id, provider: row.provider, error: err.message },
      'push credentials refused',
    );
  } finally {
    stopListening();
    sending.release(claim.lo);
    writer.claimDone(claim.lo);
  }
}

async function currentStatus(svc: Svc, id: string): Promise<string | undefined> {
  return (await svc.db('push_notifications').where({ id }).first('status'))?.status;
}

/** The work of one `push.send` job. */
export async function sendNotification(svc: Svc, notificationId: string): Promise<{ status: string }> {
  const first = await svc.db<NotificationRow>('push_notifications').where({ id: notificationId }).first();
  if (!first || FINAL_STATUSES.includes(first.status)) return { status: first?.status ?? 'gone' };
  if (svc.clock.now().getTime() >= expiresAt(first)) {
    await finishNotification(svc, notificationId, 'expired');
    return { status: 'expired' };
  }
  const creds = await loadCredentials(svc.db, svc.config.secret, first.station_id, first.provider);
  if (!creds) {
    await finishNotification(svc, notificationId, 'failed', `The station has no ${first.provider} credentials any more.`);
    return { status: 'failed' };
  }
  const row = await start(svc, notificationId);
  if (!row || row.status !== 'sending') return { status: row?.status ?? 'gone' };
  const sending = joinSending(svc, row);
  try {
    return await sendJoined(svc, row, creds, sending);
  } finally {
    await leaveSending(svc, sending);
  }
}

async function sendJoined(svc: Svc, row: NotificationRow, creds: PushCredentials, sending: Sending): Promise<{ status: string }> {
  const sender = senderFor(svc, creds);
  const pace = stationPace(svc, row.station_id, row.provider, sender.maxBatch);
  // PUSH_CONCURRENCY is what one notification keeps in flight, over all its jobs and lanes.
  const perLane = Math.max(1, Math.ceil(svc.config.push.concurrency / (LANES * SEND_PARTS)));
  // Devices claimed at once by a lane: CLAIM_ROUNDS rounds of its requests in flight (an Expo request
  // carries a whole batch).
  const chunk = sender.provider === 'expo' ? pace.batch : Math.min(pace.batch, perLane * CLAIM_ROUNDS);
  const expired = () => svc.clock.now().getTime() >= expiresAt(row);

  /**
   * Claims `n` devices and holds the claim's lease at once (renewed from then on). Until its delivery
   * begins, a stop counts its devices failed at once (none was started).
   */
  const claimHeld = async (n: number): Promise<Held | null> => {
    const issuedAt = performance.now();
    const claimed = await claim(svc, row.id, n);
    if (claimed === null) return null;
    const held: Held = { claim: claimed, lease: sending.hold(claimed.lo, issuedAt), settled: false, unlisten: () => undefined };
    const settle = () => {
      held.settled = true;
      for (const c of claimed.devices) sending.writer.add(c.seq, 'failed', null, null, true);
      void sending.writer.flush();
    };
    if (sending.stopped) settle();
    else held.unlisten = sending.onStop(settle);
    return held;
  };
  const lane = async (): Promise<void> => {
    for (;;) {
      if (drained.has(row.id)) return;
      if (expired()) {
        await finishNotification(svc, row.id, 'expired');
        return;
      }
      if (!(await pace.acquire(() => drained.has(row.id) || sending.stopped))) return;
      // One pace token is a batch; it is claimed a chunk at a time, so a process that dies leaves few
      // devices claimed but never started (they count failed: nobody can know they were not sent). The
      // next chunk is claimed as soon as every request of this one has started, while the last answers
      // are awaited, so the lane's requests do not wait on the claim.
      let left = pace.batch;
      let next: Promise<Held | null> | null = claimHeld(Math.min(left, chunk));
      while (next !== null) {
        const held = await next;
        if (held === null) {
          markDrained(row.id);
          return;
        }
        left -= held.claim.size;
        let following: Promise<Held | null> | null = null;
        const claimNext = () => {
          if (following === null && left > 0 && !sending.stopped) following = claimHeld(Math.min(left, chunk));
        };
        held.unlisten();
        if (!held.settled) await deliver(svc, row, sender, sending, held.claim, held.lease, perLane, claimNext);
        else {
          sending.release(held.claim.lo);
          sending.writer.claimDone(held.claim.lo);
        }
        claimNext();
        next = following;
      }
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  await sending.writer.drain();

  // Nothing left to claim: wait for other jobs' in-flight requests; a dead job's rows go stale and count failed.
  for (;;) {
    await failAbandoned(svc, row.id);
    const now = await svc.db<NotificationRow>('push_notifications').where({ id: row.id }).first();
    if (!now || now.status !== 'sending') return { status: now?.status ?? 'gone' };
    if (expired()) {
      await finishNotification(svc, row.id, 'expired');
      return { status: 'expired' };
    }
    if (countsOf(now).pending === 0) break;
    await sleep(200);
  }
  if (await finishNotification(svc, row.id, 'done')) {
    if (row.provider === 'expo') await scheduleReceipts(svc, row);
  }
  return { status: (await currentStatus(svc, row.id)) ?? 'gone' };
}

async function scheduleReceipts(svc: Svc, row: NotificationRow): Promise<void> {
  await svc.jobs
    .enqueue(
      'push.receipts',
      { notificationId: row.id, stationId: row.station_id },
      { jobId: `push.receipts.${row.id}`, delay: svc.config.push.expoReceiptDelaySeconds * 1000 },
    )
    .catch((err) => svc.logger.warn({ err, notificationId: row.id }, 'could not queue the expo receipts'));
}
