import { createHash } from 'node:crypto';
import { IdempotencyConflictError, NotFoundError, PushNotConfiguredError, ValidationError } from '../../../lib/errors.ts';
import { inTransaction } from '../../../lib/db.ts';
import { newId } from '../../../lib/ids.ts';
import { keysetPage } from '../../../lib/keysetCursor.ts';
import type { Services } from '../../../services.ts';
import type { PushProvider, Station } from '../../stations/model.ts';
import { canonicalJson } from '../../../lib/canonicalJson.ts';
import { emitWebhookEvent } from '../../webhooks/emit.ts';
import type {
  NotificationListQuery,
  NotificationSource,
  NotificationStatus,
  NotificationView,
  SendNotificationBody,
  Topic,
} from './schemas.ts';
import { findCredentialsRow } from '../providers/credentials.ts';
import { failAbandoned, LEASE_MS } from './sending/claims.ts';

// Push notifications (decisions.md, "Push notifications"): creation (admin route and `notify` on
// publish), the view with live counts, the list, cancel. Sending is send.ts, in the worker.

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;
export const RETENTION_MS = 30 * 24 * 3600_000;
export const FINAL_STATUSES: NotificationStatus[] = ['done', 'cancelled', 'expired', 'failed'];
/** Jobs sending one notification at once; each claims devices on its own (several workers share the work). */
export const SEND_PARTS = 2;

export interface NotificationRow {
  id: string;
  station_id: string;
  provider: PushProvider;
  topic: Topic;
  source: NotificationSource;
  record_id: string | null;
  record_revision: number | null;
  /** A reminder's broadcast and due time (migration 20261213030000_push_follows); null otherwise. */
  broadcast_id: string | null;
  due_at: Date | null;
  title: string;
  body: string | null;
  url: string | null;
  data: Record<string, string>;
  ttl_seconds: number;
  collapse_key: string | null;
  idempotency_key: string | null;
  request_hash: string | null;
  status: NotificationStatus;
  error: string | null;
  targeted: number;
  /** Kept by a trigger on push_deliveries (migration 20261211000000_push_counts). */
  sent_count: number;
  failed_count: number;
  pruned_count: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface Counts {
  targeted: number;
  sent: number;
  failed: number;
  pruned: number;
  pending: number;
}

type Svc = Pick<Services, 'db' | 'config' | 'clock' | 'jobs' | 'logger' | 'webhooks'>;

/** The provider to send through; 409 PUSH_NOT_CONFIGURED naming what is missing. */
export async function requirePushConfigured(svc: Pick<Services, 'db'>, station: Station): Promise<PushProvider> {
  if (!station.modules.push) throw new PushNotConfiguredError('The push module is switched off for this station (modules.push).');
  const provider = station.push.provider;
  if (provider === null) throw new PushNotConfiguredError('This station has no push provider (push.provider).');
  const creds = await findCredentialsRow(svc.db, station.id);
  if (!creds || creds.provider !== provider)
    throw new PushNotConfiguredError(`This station has no ${provider} credentials (PUT …/push/credentials).`);
  return provider;
}

function checkContent(body: { url?: string; data?: Record<string, string> }): void {
  if (body.url !== undefined && !body.url.startsWith('/')) {
    let ok = false;
    try {
      ok = new URL(body.url).protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok)
      throw new ValidationError('Invalid notification.', [
        { path: 'url', code: 'invalid_url', message: 'url must be an absolute https URL or a path starting with /' },
      ]);
  }
  if (body.data !== undefined && Buffer.byteLength(JSON.stringify(body.data)) > 2048)
    throw new ValidationError('Invalid notification.', [
      { path: 'data', code: 'too_large', message: 'data must be at most 2 KiB as JSON' },
    ]);
}

export const sendJobId = (notificationId: string, part: number): string => `push.send.${notificationId}.${part}`;

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
  /** Reminders: the broadcast and the due instant (one notification per pair). */
  broadcastId?: string;
  dueAt?: Date;
}

export function insertRow(station: Station, provider: PushProvider, input: NewNotification, now: Date, requestHash: string | null) {
  return {
    id: newId(),
    station_id: station.id,
    provider,
    topic: input.topic,
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
    request_hash: requestHash,
    status: 'queued',
    targeted: 0,
    created_at: now,
  };
}

/** POST …/push/notifications: a new notification (created: true), or the one its idempotency key names. */
export async function createNotification(
  svc: Svc,
  station: Station,
  body: SendNotificationBody,
): Promise<{ row: NotificationRow; created: boolean }> {
  checkContent(body);
  const provider = await requirePushConfigured(svc, station);
  const now = svc.clock.now();
  const requestHash = body.idempotencyKey ? createHash('sha256').update(canonicalJson(body)).digest('hex') : null;
  const result = await inTransaction(svc.db, async ({ trx }) => {
    if (body.idempotencyKey) {
      // The station row lock serialises creations with a key, so one key never makes two notifications.
      await trx('stations').where({ id: station.id }).forUpdate().first('id');
      const existing = await trx<NotificationRow>('push_notifications')
        .where({ station_id: station.id, idempotency_key: body.idempotencyKey })
        .andWhere('created_at', '>', new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS))
        .orderBy('created_at', 'desc')
        .first();
      if (existing) {
        if (existing.request_hash !== requestHash)
          throw new IdempotencyConflictError('This idempotencyKey was used within 24 h with another body.');
        return { row: existing, created: false };
      }
    }
    const [row] = await trx('push_notifications')
      .insert(insertRow(station, provider, { ...body, source: 'admin' }, now, requestHash))
      .returning('*');
    return { row: row as NotificationRow, created: true };
  });
  if (result.created) await enqueueSend(svc, result.row);
  return result;
}

/**
 * `notify` on publish: one `content` notification per (record, revision). Null when push is not
 * configured or anything goes wrong: publishing never fails because of push.
 */
export async function notifyPublished(
  svc: Svc,
  station: Station,
  input: NewNotification & { recordId: string; recordRevision: number },
): Promise<string | null> {
  try {
    checkContent(input);
    const provider = await requirePushConfigured(svc, station);
    const inserted = await svc
      .db('push_notifications')
      .insert(insertRow(station, provider, input, svc.clock.now(), null))
      .onConflict(svc.db.raw('(record_id, record_revision) WHERE record_id IS NOT NULL'))
      .ignore()
      .returning('*');
    if (inserted.length > 0) {
      await enqueueSend(svc, inserted[0] as NotificationRow);
      return (inserted[0] as NotificationRow).id;
    }
    const existing = await svc
      .db('push_notifications')
      .where({ record_id: input.recordId, record_revision: input.recordRevision })
      .first('id');
    return existing?.id ?? null;
  } catch (err) {
    if (!(err instanceof PushNotConfiguredError) && !(err instanceof ValidationError))
      svc.logger.warn({ err, stationId: station.id, recordId: input.recordId }, 'could not create the publish notification');
    return null;
  }
}

/** Live counts: pending includes devices whose request is in flight. */
export function countsOf(row: NotificationRow): Counts {
  const { targeted, sent_count: sent, failed_count: failed, pruned_count: pruned } = row;
  return { targeted, sent, failed, pruned, pending: targeted - sent - failed - pruned };
}

export function presentNotification(row: NotificationRow): NotificationView {
  return {
    id: row.id,
    topic: row.topic,
    source: row.source,
    recordId: row.record_id,
    broadcastId: row.broadcast_id,
    title: row.title,
    body: row.body,
    url: row.url,
    data: row.data,
    ttlSeconds: row.ttl_seconds,
    collapseKey: row.collapse_key,
    status: row.status,
    error: row.error,
    counts: countsOf(row),
    createdAt: row.created_at.toISOString(),
    startedAt: row.started_at ? row.started_at.toISOString() : null,
    finishedAt: row.finished_at ? row.finished_at.toISOString() : null,
  };
}

export async function requireNotification(svc: Pick<Services, 'db'>, stationId: string, id: string): Promise<NotificationRow> {
  const row = await svc.db<NotificationRow>('push_notifications').where({ id, station_id: stationId }).first();
  if (!row) throw new NotFoundError('Notification not found.');
  return row;
}

export async function notificationsPage(svc: Pick<Services, 'db' | 'config'>, stationId: string, query: NotificationListQuery) {
  const rows = svc.db<NotificationRow>('push_notifications').where('station_id', stationId);
  const { page, nextCursor } = await keysetPage<NotificationRow>(
    rows,
    svc.config.secret,
    { s: stationId },
    'this station’s notifications',
    query,
  );
  return { notifications: page.map(presentNotification), nextCursor };
}

/**
 * Ends a notification that is still queued or sending (`status` one of the final ones): devices not yet
 * claimed are counted failed and never sent to (those in flight get their request's outcome). True when
 * this call ended it; the `push.finished` event then goes out (once: only the call that moved the status
 * sends it).
 */
export async function finishNotification(
  svc: Pick<Services, 'db' | 'clock' | 'jobs' | 'logger' | 'webhooks'>,
  id: string,
  status: NotificationStatus,
  error: string | null = null,
): Promise<boolean> {
  const ended = await endNotification(svc, id, status, error);
  if (ended) await afterEnd(svc, id);
  return ended;
}

async function endNotification(svc: Pick<Services, 'db' | 'clock'>, id: string, status: NotificationStatus, error: string | null) {
  return inTransaction(svc.db, async ({ trx }) => {
    const updated = await trx('push_notifications')
      .where({ id })
      .whereIn('status', ['queued', 'sending'])
      .update({ status, error, finished_at: svc.clock.now() });
    if (updated === 0) return false;
    // Devices not claimed yet are never sent to; claimed ones get the outcome of their request.
    await trx.raw(
      `UPDATE push_deliveries d SET state = 'failed' FROM push_notifications n
       WHERE n.id = ? AND d.notification_id = n.id AND d.state = 'pending' AND d.seq > n.claimed_seq`,
      [id],
    );
    await trx('push_notifications')
      .where({ id })
      .update({ claimed_seq: trx.ref('targeted') });
    return true;
  });
}

async function afterEnd(svc: Pick<Services, 'db' | 'clock' | 'jobs' | 'logger' | 'webhooks'>, id: string): Promise<void> {
  await failAbandoned(svc, id);
  await emitFinished(svc, id);
}

/**
 * POST …/cancel. Answers only once no process will start another request of the notification: every
 * process confirms it heard the cancel (its sender checks that flag right before each request), or, when
 * one does not confirm in time, once LEASE_MS passed since the commit, when every permit to send that a
 * process was granted before the commit has lapsed (leases.ts).
 */
export async function cancelNotification(
  svc: Pick<Services, 'db' | 'clock' | 'jobs' | 'logger' | 'webhooks' | 'invalidation'>,
  id: string,
): Promise<void> {
  const ended = await endNotification(svc, id, 'cancelled', null);
  const committedAt = performance.now();
  const status = (await svc.db('push_notifications').where({ id }).first('status'))?.status;
  if (status === 'cancelled') {
    const confirmed = await svc.invalidation.broadcast('push-cancel', id);
    const wait = committedAt + LEASE_MS + 50 - performance.now();
    if (!confirmed && wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  if (ended) await afterEnd(svc, id);
}

export async function emitFinished(svc: Pick<Services, 'db' | 'clock' | 'jobs' | 'logger' | 'webhooks'>, id: string): Promise<void> {
  const row = await svc.db<NotificationRow>('push_notifications').where({ id }).first();
  if (row) await emitWebhookEvent(svc, row.station_id, 'push.finished', presentNotification(row));
}
