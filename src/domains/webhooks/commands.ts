import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { inTransaction } from '../../lib/db.ts';
import { newId } from '../../lib/ids.ts';
import type { Services } from '../../services.ts';
import { ROTATION_OVERLAP_MS, type WebhookRow } from './model.ts';
import { MAX_WEBHOOKS_PER_STATION, type CreateWebhookBody, type PatchWebhookBody } from './schemas.ts';
import { encryptSecret, generateSigningSecret } from './secrets.ts';
import { urlProblem } from './transport.ts';

// Admin commands on a station's webhooks. Every write drops the station's cached subscriptions
// everywhere (subscriptions.ts) once committed.

function checkUrl(svc: Pick<Services, 'config'>, url: string): void {
  const problem = urlProblem(url, svc.config.webhooks.allowInsecure);
  if (problem) throw new ValidationError('Invalid webhook.', [{ path: 'url', code: 'invalid_url', message: problem }]);
}

export async function requireWebhook(svc: Pick<Services, 'db'>, stationId: string, webhookId: string): Promise<WebhookRow> {
  const row = await svc.db<WebhookRow>('webhooks').where({ id: webhookId, station_id: stationId }).first();
  if (!row) throw new NotFoundError('Webhook not found.');
  return row;
}

export async function createWebhook(
  svc: Services,
  stationId: string,
  body: CreateWebhookBody,
): Promise<{ row: WebhookRow; secret: string }> {
  checkUrl(svc, body.url);
  const secret = generateSigningSecret();
  const now = svc.clock.now();
  const row = await inTransaction(svc.db, async ({ trx }) => {
    // The station row lock serialises creations, so the limit holds under concurrency.
    const station = await trx('stations').where({ id: stationId }).forUpdate().first('id');
    if (!station) throw new NotFoundError('Station not found.');
    const [{ count }] = await trx('webhooks').where({ station_id: stationId }).count<Array<{ count: number }>>({ count: '*' });
    if (Number(count) >= MAX_WEBHOOKS_PER_STATION)
      throw new ConflictError(`A station has at most ${MAX_WEBHOOKS_PER_STATION} webhooks; delete one first.`);
    const [inserted] = await trx<WebhookRow>('webhooks')
      .insert({
        id: newId(),
        station_id: stationId,
        url: body.url,
        events: body.events,
        description: body.description ?? null,
        active: true,
        secret_enc: encryptSecret(svc.config.secret, secret),
        created_at: now,
        updated_at: now,
      })
      .returning('*');
    return inserted as WebhookRow;
  });
  await svc.invalidation.invalidate('webhooks', stationId);
  return { row, secret };
}

export async function patchWebhook(svc: Services, stationId: string, webhookId: string, body: PatchWebhookBody): Promise<WebhookRow> {
  if (body.url !== undefined) checkUrl(svc, body.url);
  await requireWebhook(svc, stationId, webhookId);
  const changes: Partial<WebhookRow> = { updated_at: svc.clock.now() };
  if (body.url !== undefined) changes.url = body.url;
  if (body.events !== undefined) changes.events = body.events;
  if (body.description !== undefined) changes.description = body.description;
  if (body.active !== undefined) {
    changes.active = body.active;
    // Switched on again: the failure streak starts over.
    if (body.active) changes.failing_since = null;
  }
  const [row] = await svc.db.transaction((trx) =>
    trx<WebhookRow>('webhooks').where({ id: webhookId, station_id: stationId }).update(changes).returning('*'),
  );
  await svc.invalidation.invalidate('webhooks', stationId);
  return row as WebhookRow;
}

export async function deleteWebhook(svc: Services, stationId: string, webhookId: string): Promise<void> {
  await requireWebhook(svc, stationId, webhookId);
  await svc.db.transaction((trx) => trx('webhooks').where({ id: webhookId, station_id: stationId }).delete());
  await svc.invalidation.invalidate('webhooks', stationId);
}

/** A new signing secret; the current one keeps signing beside it for 24 h (a rotation during an overlap drops the oldest). */
export async function rotateWebhookSecret(
  svc: Services,
  stationId: string,
  webhookId: string,
): Promise<{ secret: string; previousSecretExpiresAt: Date }> {
  const hook = await requireWebhook(svc, stationId, webhookId);
  const secret = generateSigningSecret();
  const now = svc.clock.now();
  const previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  await svc.db.transaction((trx) =>
    trx('webhooks')
      .where({ id: hook.id })
      .update({
        secret_enc: encryptSecret(svc.config.secret, secret),
        previous_secret_enc: hook.secret_enc,
        previous_secret_expires_at: previousSecretExpiresAt,
        updated_at: now,
      }),
  );
  return { secret, previousSecretExpiresAt };
}
