import { countsOf, type NotificationRow } from './model.ts';
import type { NotificationView } from './schemas.ts';

/** The public view of a notification (admin routes, the `push.finished` event), with its live counts. */
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
