import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../lib/canonicalJson.ts';
import { inTransaction } from '../../../lib/db.ts';
import { IdempotencyConflictError, PushNotConfiguredError, ValidationError } from '../../../lib/errors.ts';
import type { Services } from '../../../services.ts';
import type { PushProvider, Station } from '../../stations/model.ts';
import { findCredentialsRow } from '../providers/credentials.ts';
import { IDEMPOTENCY_WINDOW_MS, type NotificationRow } from './model.ts';
import { queueNotification, type NewNotification } from './queue.ts';
import type { DeviceTopic, SendNotificationBody } from './schemas.ts';

// Creating push notifications (docs/push.md#sending): the operator's send (admin route) and `notify` on
// publish. Sending is the worker's (sending/send.ts); how a notification ends is lifecycle.ts.

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
  return inTransaction(svc.db, async (tx) => {
    const { trx } = tx;
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
    const row = await queueNotification(svc, tx, {
      stationId: station.id,
      provider,
      notification: { ...body, source: 'admin' },
      devices: { topic: body.topic },
      now,
      requestHash,
    });
    // Always created: it names no record, and its devices are the topic's (targeted when sending starts).
    return { row: row as NotificationRow, created: true };
  });
}

/**
 * `notify` on publish: one `content` notification per (record, revision). Null when push is not
 * configured or anything goes wrong: publishing never fails because of push.
 */
export async function notifyPublished(
  svc: Svc,
  station: Station,
  input: NewNotification & { topic: DeviceTopic; recordId: string; recordRevision: number },
): Promise<string | null> {
  try {
    checkContent(input);
    const provider = await requirePushConfigured(svc, station);
    const created = await inTransaction(svc.db, (tx) =>
      queueNotification(svc, tx, {
        stationId: station.id,
        provider,
        notification: input,
        devices: { topic: input.topic },
        now: svc.clock.now(),
      }),
    );
    if (created) return created.id;
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
