import { inTransaction } from '../../lib/db.ts';
import { pushMessages } from '../../lib/metrics.ts';
import type { Services } from '../../services.ts';
import { loadCredentials, type PushCredentials } from './credentials.ts';
import { FINAL_STATUSES, finishNotification, SEND_PARTS, type NotificationRow } from './notifications.ts';
import { stationPace } from './pacing.ts';
import { failAbandoned } from './claims.ts';
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
    await trx.raw(
      `INSERT INTO push_deliveries (notification_id, token_hash, token, seq, state)
       SELECT ?, token_hash, token, row_number() OVER (), 'pending' FROM push_devices WHERE station_id = ? AND provider = ? AND ${topicColumn}`,
      [id, row.station_id, row.provider],
    );
    const [{ n }] = await trx('push_deliveries').where({ notification_id: id }).select(trx.raw('count(*)::int AS n'));
    const [started] = await trx('push_notifications')
      .where({ id })
      .update({ status: 'sending', started_at: svc.clock.now(), targeted: n })
      .returning('*');
    return started as NotificationRow;
  });
}

interface Claimed {
  hash: string;
  token: string;
}

interface Claim {
  lo: number;
  devices: Claimed[];
}

/**
 * Claims the next `n` devices: reserves the range (claimed_seq, claimed_seq + n] on the notification row
 * (under its row lock) and records the claim, in one transaction (a crash in between claims nothing).
 * The PK-ordered range costs O(n) whatever the notification's size (a LIMIT … FOR UPDATE SKIP LOCKED
 * scan slowed down with the rows already sent). Null when every range is taken.
 */
async function claim(svc: Svc, id: string, n: number): Promise<Claim | null> {
  return inTransaction(svc.db, async ({ trx }) => {
    const row = await trx('push_notifications').where({ id }).forUpdate().first('claimed_seq', 'targeted', 'status');
    if (!row || row.status !== 'sending' || row.claimed_seq >= row.targeted) return null;
    const lo = row.claimed_seq as number;
    const hi = Math.min(lo + n, row.targeted as number);
    await trx('push_notifications').where({ id }).update({ claimed_seq: hi });
    await trx('push_claims').insert({ notification_id: id, lo, hi, claimed_at: trx.fn.now() });
    const devices: Claimed[] = await trx('push_deliveries')
      .where({ notification_id: id, state: 'pending' })
      .andWhere('seq', '>', lo)
      .andWhere('seq', '<=', hi)
      .select('token_hash as hash', 'token');
    return { lo, devices };
  });
}

/** Moves pending rows to their outcome (only rows still pending: a row counted failed meanwhile stays so). */
async function record(
  svc: Svc,
  row: NotificationRow,
  state: 'sent' | 'failed' | 'pruned',
  claimed: Claimed[],
  tickets?: string[],
): Promise<void> {
  if (claimed.length === 0) return;
  const hashes = claimed.map((c) => c.hash);
  if (tickets) {
    await svc.db.raw(
      `UPDATE push_deliveries d SET state = 'sent', ticket_id = v.ticket
       FROM unnest(?::text[], ?::text[]) AS v(hash, ticket)
       WHERE d.notification_id = ? AND d.state = 'pending' AND d.token_hash = v.hash`,
      [hashes, tickets, row.id],
    );
  } else {
    await svc.db('push_deliveries').where({ notification_id: row.id, state: 'pending' }).whereIn('token_hash', hashes).update({ state });
  }
  // A dead token is removed from the station's devices (it is `pruned`, not also `sent`).
  if (state === 'pruned') await svc.db('push_devices').where({ station_id: row.station_id }).whereIn('token_hash', hashes).delete();
  pushMessages.labels(row.provider, state).inc(claimed.length);
}

const touch = (svc: Svc, id: string, lo: number) =>
  svc.db('push_claims').where({ notification_id: id, lo }).update({ claimed_at: svc.db.fn.now() });

/** Sends one claimed batch, retrying 429/5xx answers (honouring Retry-After) up to MAX_ATTEMPTS. */
async function deliver(svc: Svc, row: NotificationRow, sender: PushSender, claim: Claim, concurrency: number): Promise<void> {
  const message = messageOf(row);
  let todo = claim.devices;
  const heartbeat = setInterval(() => touch(svc, row.id, claim.lo).catch(() => undefined), HEARTBEAT_MS);
  try {
    for (let attempt = 1; todo.length > 0; attempt++) {
      const outcomes: Outcome[] = await sender.send(
        todo.map((c) => c.token),
        message,
        concurrency,
      );
      const sent: Claimed[] = [];
      const tickets: string[] = [];
      const failed: Claimed[] = [];
      const pruned: Claimed[] = [];
      const retry: Claimed[] = [];
      let waitMs = 0;
      outcomes.forEach((o, i) => {
        const c = todo[i];
        if (o.result === 'sent') {
          sent.push(c);
          tickets.push(o.ticketId ?? '');
        } else if (o.result === 'pruned') pruned.push(c);
        else if (o.result === 'failed') failed.push(c);
        else {
          retry.push(c);
          waitMs = Math.max(waitMs, o.retryAfterMs ?? 0);
        }
      });
      const withTickets = tickets.some((t) => t !== '');
      await record(svc, row, 'sent', sent, withTickets ? tickets : undefined);
      await record(svc, row, 'failed', failed);
      await record(svc, row, 'pruned', pruned);
      const retryAt = Date.now() + Math.min(MAX_RETRY_WAIT_MS, Math.max(waitMs, 500 * 2 ** (attempt - 1)));
      if (retry.length > 0 && (attempt >= MAX_ATTEMPTS || retryAt > expiresAt(row) - (svc.clock.now().getTime() - Date.now()))) {
        await record(svc, row, 'failed', retry);
        todo = [];
      } else {
        todo = retry;
        if (retry.length > 0) {
          pushMessages.labels(row.provider, 'retried').inc(retry.length);
          await sleep(retryAt - Date.now());
        }
      }
    }
  } catch (err) {
    if (!(err instanceof CredentialsRefusedError)) throw err;
    await record(svc, row, 'failed', todo);
    await finishNotification(svc, row.id, 'failed', err.message);
    svc.logger.warn(
      { notificationId: row.id, stationId: row.station_id, provider: row.provider, error: err.message },
      'push credentials refused',
    );
  } finally {
    clearInterval(heartbeat);
  }
  // Every device of the claim has its outcome (a thrown error leaves the claim to go stale).
  await svc.db('push_claims').where({ notification_id: row.id, lo: claim.lo }).delete();
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
      if ((await currentStatus(svc, row.id)) !== 'sending') return;
      if (expired()) {
        await finishNotification(svc, row.id, 'expired');
        return;
      }
      await pace.acquire();
      const claimed = await claim(svc, row.id, pace.batch);
      if (claimed === null) return;
      await deliver(svc, row, sender, claimed, perLane);
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));

  // Nothing left to claim: wait for other jobs' in-flight requests; a dead job's rows go stale and count failed.
  for (;;) {
    const status = await currentStatus(svc, row.id);
    if (status !== 'sending') return { status: status ?? 'gone' };
    if (expired()) {
      await finishNotification(svc, row.id, 'expired');
      return { status: 'expired' };
    }
    await failAbandoned(svc, row.id);
    const open = await svc.db('push_deliveries').where({ notification_id: row.id, state: 'pending' }).first('seq');
    if (!open) break;
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
