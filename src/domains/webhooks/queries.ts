import { keysetPage } from '../../lib/keysetCursor.ts';
import type { Services } from '../../services.ts';
import { LOG_RETENTION_MS, type DeliveryRow } from './model.ts';

// The delivery log, newest first, with signed keyset cursors bound to the webhook.

const presentDelivery = (row: DeliveryRow) => ({
  id: row.id,
  eventId: row.event_id,
  type: row.type,
  attempt: row.attempt,
  status: row.status,
  httpStatus: row.http_status,
  durationMs: row.duration_ms,
  error: row.error,
  createdAt: row.created_at.toISOString(),
  nextAttemptAt: row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
});

export async function deliveriesPage(
  svc: Pick<Services, 'db' | 'config' | 'clock'>,
  webhookId: string,
  query: { limit?: number; cursor?: string },
) {
  const rows = svc
    .db<DeliveryRow>('webhook_deliveries')
    .where('webhook_id', webhookId)
    .andWhere('created_at', '>=', new Date(svc.clock.now().getTime() - LOG_RETENTION_MS));
  const { page, nextCursor } = await keysetPage<DeliveryRow>(rows, svc.config.secret, { w: webhookId }, 'this webhook’s deliveries', query);
  return { deliveries: page.map(presentDelivery), nextCursor };
}
