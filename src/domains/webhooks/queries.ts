import { keysetCursor, readKeysetCursor } from '../../lib/keysetCursor.ts';
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
  const limit = query.limit ?? 25;
  const after = query.cursor ? readKeysetCursor(svc.config.secret, query.cursor, { w: webhookId }, 'this webhook’s deliveries') : null;
  const q = svc
    .db<DeliveryRow>('webhook_deliveries')
    .where('webhook_id', webhookId)
    .andWhere('created_at', '>=', new Date(svc.clock.now().getTime() - LOG_RETENTION_MS))
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit + 1);
  if (after) q.andWhereRaw('(created_at, id) < (?::timestamptz, ?::uuid)', [after.createdAt, after.id]);
  const rows = await q;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > limit && last ? keysetCursor(svc.config.secret, { w: webhookId }, last) : null;
  return { deliveries: page.map(presentDelivery), nextCursor };
}
