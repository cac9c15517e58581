import { newId } from '../../../lib/ids.ts';
import type { Services } from '../../../services.ts';
import type { PushProvider, Station } from '../../stations/model.ts';
import { SEND_PARTS } from './model.ts';
import type { NotificationSource, Topic } from './schemas.ts';

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
