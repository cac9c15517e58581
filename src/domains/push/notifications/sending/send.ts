import type { Services } from '../../../../services.ts';
import { loadCredentials } from '../../providers/credentials.ts';
import { senderFor } from '../../providers/senders.ts';
import { finishNotification } from '../lifecycle.ts';
import { countsOf, expiresAt, FINAL_STATUSES, type NotificationRow } from '../model.ts';
import { startSending } from '../targets.ts';
import { failAbandoned } from './claims.ts';
import type { SendingJob } from './delivery.ts';
import { runLanes } from './lanes.ts';
import { joinSending, leaveSending } from './leases.ts';
import { scheduleReceipts } from './receipts.ts';

// Sending one notification (a `push.send` job; SEND_PARTS of them share each notification, in one
// worker or several). At most once per device: a batch is claimed by reserving the next range of the
// delivery rows' `seq` (`claimed_seq` on the notification row) and recording it in `push_claims`, in one
// transaction, before any request leaves; ranges never overlap, so no other job can take those devices.
// A live process renews its claims (leases.ts), and asks its lease right before each request (a cancel,
// or a claim taken over, stops it). A `pending` row inside the reserved part that no fresh claim covers
// belonged to a process that died (SIGKILL, lost host): it is counted `failed`, never sent again.
// Outcomes are written as they come, by the process' OutcomeWriter (claims.ts). The job's lanes are
// lanes.ts, the sending of one batch delivery.ts.

type Svc = Services;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  const row = await startSending(svc, notificationId);
  if (!row || row.status !== 'sending') return { status: row?.status ?? 'gone' };
  const sending = joinSending(svc, row);
  try {
    return await sendJoined({ svc, row, sender: senderFor(svc, creds), sending });
  } finally {
    await leaveSending(svc, sending);
  }
}

async function sendJoined(job: SendingJob): Promise<{ status: string }> {
  const { svc, row, sending } = job;
  const expired = () => svc.clock.now().getTime() >= expiresAt(row);
  await runLanes(job);
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
