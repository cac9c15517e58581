import { ValidationError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { sign, verify } from '../../lib/tokens.ts';
import type { Services } from '../../services.ts';
import { LOG_RETENTION_MS, type DeliveryRow } from './model.ts';

// The delivery log, newest first, with signed keyset cursors bound to the webhook.

interface CursorPayload {
  w: string;
  a: number;
  i: string;
}

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
  let after: CursorPayload | null = null;
  if (query.cursor) {
    after = verify<CursorPayload>(svc.config.secret, query.cursor);
    if (!after || after.w !== webhookId || !Number.isSafeInteger(after.a) || typeof after.i !== 'string' || !isUuid(after.i)) {
      throw new ValidationError('Invalid cursor.', [
        {
          path: 'cursor',
          code: 'invalid_cursor',
          message: 'cursor must be a nextCursor of this webhook’s deliveries, passed back unchanged',
        },
      ]);
    }
  }
  const q = svc
    .db<DeliveryRow>('webhook_deliveries')
    .where('webhook_id', webhookId)
    .andWhere('created_at', '>=', new Date(svc.clock.now().getTime() - LOG_RETENTION_MS))
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit + 1);
  if (after) q.andWhereRaw('(created_at, id) < (?::timestamptz, ?::uuid)', [new Date(after.a), after.i]);
  const rows = await q;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > limit && last
      ? sign(svc.config.secret, { w: webhookId, a: last.created_at.getTime(), i: last.id } satisfies CursorPayload)
      : null;
  return { deliveries: page.map(presentDelivery), nextCursor };
}
