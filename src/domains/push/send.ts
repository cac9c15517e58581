import { inTransaction } from '../../lib/db.ts';
import { pushMessages } from '../../lib/metrics.ts';
import type { Services } from '../../services.ts';
import { loadCredentials, type PushCredentials } from './credentials.ts';
import { countsOf, FINAL_STATUSES, finishNotification, SEND_PARTS, type NotificationRow } from './notifications.ts';
import { stationPace } from './pacing.ts';
import { claim, failAbandoned, noOutcomes, record, touch, type Claim, type Claimed } from './claims.ts';
import { apnsSender } from './providers/apns.ts';
import { expoSender } from './providers/expo.ts';
import { fcmSender } from './providers/fcm.ts';
import { CredentialsRefusedError, type Outcome, type PushMessage, type PushSender } from './providers/types.ts';

// Sending one notification (a `push.send` job; SEND_PARTS of them share each notification, in one
// worker or several). At most once per device: a batch is claimed by reserving the next range of the
// delivery rows' `seq` (`claimed_seq` on the notification row) and recording it in `push_claims`, in one
// transaction, before any request leaves; ranges never overlap, so no other job can take those devices.
// A live job keeps its claim's `claimed_at` fresh (a heartbeat). A `pending` row inside the reserved
// part that no fresh claim covers belonged to a job that died (SIGKILL, lost process): it is counted
// `failed`, never sent again. Only the outcome writes the delivery row (one write per device).

/** Claim-send-record loops per job: while one lane waits on the database, the others send. */
const LANES = 8;
const MAX_ATTEMPTS = 5;
const HEARTBEAT_MS = 3000;
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

const expiresAt = (row: NotificationRow): number => row.created_at.getTime() + row.ttl_seconds * 1000;

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

/** queued → sending: the targets are every device of the station with the topic on, fixed now. */
async function start(svc: Svc, id: string): Promise<NotificationRow | undefined> {
  return inTransaction(svc.db, async ({ trx }) => {
    const row = await trx<NotificationRow>('push_notifications').where({ id }).forUpdate().first();
    if (!row || row.status !== 'queued') return row;
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

/** Sends one claimed batch, retrying 429/5xx answers (honouring Retry-After) up to MAX_ATTEMPTS. */
async function deliver(svc: Svc, row: NotificationRow, sender: PushSender, claim: Claim, concurrency: number): Promise<void> {
  let todo = claim.devices;
  // Every device of the range was counted failed meanwhile (cancelled, abandoned): only the claim goes.
  if (todo.length === 0) return record(svc, row, noOutcomes(), claim.lo);
  const message = messageOf(row);
  const heartbeat = setInterval(() => touch(svc, row.id, claim.lo).catch(() => undefined), HEARTBEAT_MS);
  try {
    for (let attempt = 1; todo.length > 0; attempt++) {
      const outcomes: Outcome[] = await sender.send(
        todo.map((c) => c.token),
        message,
        concurrency,
      );
      const out = noOutcomes();
      const retry: Claimed[] = [];
      let waitMs = 0;
      for (let i = 0; i < outcomes.length; i++) {
        const o = outcomes[i];
        const c = todo[i];
        if (o.result === 'retry') {
          retry.push(c);
          waitMs = Math.max(waitMs, o.retryAfterMs ?? 0);
          continue;
        }
        out.seqs.push(c.seq);
        out.states.push(o.result);
        out.tickets.push(o.result === 'sent' ? (o.ticketId ?? null) : null);
        // A dead token is removed from the station's devices (it is `pruned`, not also `sent`).
        if (o.result === 'pruned') out.dead.push(c.hash);
      }
      const retryAt = Date.now() + Math.min(MAX_RETRY_WAIT_MS, Math.max(waitMs, 500 * 2 ** (attempt - 1)));
      const giveUp = attempt >= MAX_ATTEMPTS || retryAt > expiresAt(row) - (svc.clock.now().getTime() - Date.now());
      if (retry.length > 0 && giveUp) {
        for (const c of retry) {
          out.seqs.push(c.seq);
          out.states.push('failed');
          out.tickets.push(null);
        }
        todo = [];
      } else todo = retry;
      // The last write of the batch also drops its claim.
      await record(svc, row, out, todo.length === 0 ? claim.lo : null);
      if (todo.length > 0) {
        pushMessages.labels(row.provider, 'retried').inc(todo.length);
        await sleep(retryAt - Date.now());
      }
    }
  } catch (err) {
    if (!(err instanceof CredentialsRefusedError)) throw err;
    const out = noOutcomes();
    for (const c of todo) {
      out.seqs.push(c.seq);
      out.states.push('failed');
      out.tickets.push(null);
    }
    await record(svc, row, out, claim.lo);
    await finishNotification(svc, row.id, 'failed', err.message);
    svc.logger.warn(
      { notificationId: row.id, stationId: row.station_id, provider: row.provider, error: err.message },
      'push credentials refused',
    );
  } finally {
    clearInterval(heartbeat);
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
  const sender = senderFor(svc, creds);
  const pace = stationPace(svc, row.station_id, row.provider, sender.maxBatch);
  // PUSH_CONCURRENCY is what one notification keeps in flight, over all its jobs and lanes.
  const perLane = Math.max(1, Math.ceil(svc.config.push.concurrency / (LANES * SEND_PARTS)));
  const expired = () => svc.clock.now().getTime() >= expiresAt(row);

  const lane = async (): Promise<void> => {
    for (;;) {
      if (drained.has(row.id)) return;
      if (expired()) {
        await finishNotification(svc, row.id, 'expired');
        return;
      }
      if (!(await pace.acquire(() => drained.has(row.id)))) return;
      const claimed = await claim(svc, row.id, pace.batch);
      if (claimed === null) {
        markDrained(row.id);
        return;
      }
      await deliver(svc, row, sender, claimed, perLane);
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));

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
