import { pushMessages } from '../../metrics.ts';
import type { Services } from '../../../../services.ts';
import { CredentialsRefusedError, type Outcome, type PushMessage, type PushSender } from '../../providers/types.ts';
import { finishNotification } from '../lifecycle.ts';
import { expiresAt, type NotificationRow } from '../model.ts';
import type { Claim, Claimed } from './claims.ts';
import type { HeldClaim, Sending } from './leases.ts';

// Sending one claimed batch to its provider (docs/push.md#how-sending-works-srcdomainspushnotifications):
// each device's outcome is written as it comes, 429/5xx are retried, and a stop (cancel) counts failed every
// device whose request was not started.

const MAX_ATTEMPTS = 5;
const MAX_RETRY_WAIT_MS = 5 * 60_000;

/** One job's sending of a notification: what each of its batches is sent with. */
export interface SendingJob {
  svc: Services;
  row: NotificationRow;
  sender: PushSender;
  /** This process' state of the notification (leases.ts), shared with its other jobs. */
  sending: Sending;
}

/** One claimed batch, as a lane hands it over. */
export interface Delivery {
  claim: Claim;
  lease: HeldClaim;
  /** Requests kept in flight at once. */
  concurrency: number;
  /** Called once every request of the batch has started (the lane then claims its next chunk). */
  allStarted: () => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sleeps `ms`, or less once `stop()` says so. */
async function sleepUnless(ms: number, stop: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (!stop() && Date.now() < until) await sleep(Math.min(100, until - Date.now()));
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
 * Sends one claimed batch, writing each device's outcome as it comes; 429/5xx are retried (honouring
 * Retry-After) up to MAX_ATTEMPTS. When the notification stops (cancel), every device whose request was
 * not started is counted failed at once; those in flight get their answer.
 */
export async function deliver(job: SendingJob, delivery: Delivery): Promise<void> {
  const { svc, row, sender, sending } = job;
  const { claim, lease, concurrency, allStarted } = delivery;
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
    const go = sending.mayStart(lease);
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
