import type { Knex } from 'knex';
import type { Tx } from '../../../lib/db.ts';
import { newId } from '../../../lib/ids.ts';
import type { Services } from '../../../services.ts';
import type { PushProvider } from '../../stations/model.ts';
import { SEND_PARTS, type NotificationRow } from './model.ts';
import type { DeviceTopic, NotificationSource, Topic } from './schemas.ts';
import { targetListed } from './targets.ts';

// Push's door (docs/push.md#how-sending-works-srcdomainspushnotifications): every notification is created
// here, whoever asks (the operator's send, `notify` on publish, a reminder), for a set of the station's
// devices: the row, its targets and counts (targets.ts), and its send jobs once the transaction commits. No
// other domain writes push's tables; what a caller needs differently is a parameter of the notification.

export interface NewNotification {
  topic: Topic;
  source: NotificationSource;
  recordId?: string;
  recordRevision?: number;
  title: string;
  body?: string;
  url?: string;
  data?: Record<string, string>;
  ttlSeconds?: number;
  collapseKey?: string;
  idempotencyKey?: string;
  /** The broadcast it is about: a device gets at most one notification about a broadcast. */
  broadcastId?: string;
  /** When it was due (a reminder: one notification per broadcast and due time). */
  dueAt?: Date;
}

/** Which devices of the station (with its provider) a notification goes to. */
export type Devices =
  /** Every device with the topic on when the sending starts. */
  | { topic: DeviceTopic }
  /** The devices whose token hashes the query selects (one column, `token_hash`; one row per device), fixed at creation. */
  | { tokenHashes: Knex.Raw };

export interface NotificationRequest {
  stationId: string;
  provider: PushProvider;
  notification: NewNotification;
  devices: Devices;
  now: Date;
  /** The hash of the body its idempotency key was sent with. */
  requestHash?: string | null;
}

function newRow(request: NotificationRequest) {
  const input = request.notification;
  return {
    id: newId(),
    station_id: request.stationId,
    provider: request.provider,
    topic: input.topic,
    device_topic: 'topic' in request.devices ? request.devices.topic : null,
    source: input.source,
    record_id: input.recordId ?? null,
    record_revision: input.recordRevision ?? null,
    broadcast_id: input.broadcastId ?? null,
    due_at: input.dueAt ?? null,
    title: input.title,
    body: input.body ?? null,
    url: input.url ?? null,
    data: JSON.stringify(input.data ?? {}),
    ttl_seconds: input.ttlSeconds ?? 86_400,
    collapse_key: input.collapseKey ?? null,
    idempotency_key: input.idempotencyKey ?? null,
    request_hash: request.requestHash ?? null,
    status: 'queued',
    targeted: 0,
    created_at: request.now,
  };
}

/**
 * Creates a notification for a set of devices, in the caller's transaction, and queues its send jobs
 * once it commits. Null when nothing was created: the record's revision has its notification already
 * (one per record and revision), or none of the listed devices is left to send to.
 */
export async function queueNotification(
  svc: Pick<Services, 'jobs' | 'logger'>,
  { trx, afterCommit }: Tx,
  request: NotificationRequest,
): Promise<NotificationRow | null> {
  const inserted: NotificationRow[] = await trx('push_notifications')
    .insert(newRow(request))
    .onConflict(trx.raw('(record_id, record_revision) WHERE record_id IS NOT NULL'))
    .ignore()
    .returning('*');
  if (inserted.length === 0) return null;
  let row = inserted[0];
  if ('tokenHashes' in request.devices) {
    row = await targetListed(trx, row, request.devices.tokenHashes);
    if (row.targeted === 0) {
      await trx('push_notifications').where({ id: row.id }).delete();
      return null;
    }
  }
  const queued = row;
  afterCommit(() => enqueueSend(svc, queued));
  return row;
}

export const sendJobId = (notificationId: string, part: number): string => `push.send.${notificationId}.${part}`;

/** Queues the notification's SEND_PARTS send jobs (ids `push.send.{id}.{part}`). */
export async function enqueueSend(svc: Pick<Services, 'jobs' | 'logger'>, row: { id: string; station_id: string }): Promise<void> {
  try {
    await Promise.all(
      Array.from({ length: SEND_PARTS }, (_, part) =>
        svc.jobs.enqueue('push.send', { notificationId: row.id, stationId: row.station_id, part }, { jobId: sendJobId(row.id, part) }),
      ),
    );
  } catch (err) {
    // The sweep picks up a queued notification whose job could not be queued.
    svc.logger.warn({ err, notificationId: row.id }, 'could not queue a push notification');
  }
}

/** Queues again the send jobs of the source's notifications still queued since before `createdBefore`. */
export async function requeueQueued(
  svc: Pick<Services, 'db' | 'jobs' | 'logger'>,
  filter: { source: NotificationSource; createdBefore: Date },
): Promise<void> {
  const stuck: NotificationRow[] = await svc
    .db('push_notifications')
    .where({ status: 'queued', source: filter.source })
    .andWhere('created_at', '<', filter.createdBefore);
  for (const row of stuck) await enqueueSend(svc, row);
}
