import { randomBytes } from 'node:crypto';
import type { Tx } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import type { WebhookEventType } from './schemas.ts';

// Events leave from the writers of feed rows, after their transaction committed (a rolled-back write
// sends nothing), one per change. Each subscribed webhook gets its own delivery job, so one endpoint's
// slowness never holds up another's (docs/webhooks.md, "Design").

type EmitServices = Pick<Services, 'webhooks' | 'jobs' | 'clock' | 'logger'>;

export const newEventId = (): string => 'evt_' + randomBytes(16).toString('base64url');

export const deliveryJobId = (eventId: string, webhookId: string, attempt: number): string => `whd.${eventId}.${webhookId}.${attempt}`;

/**
 * Queues the event for every active webhook of the station that subscribed to it (for `ping`, only
 * `onlyWebhookId`). Never throws: the write it reports on is already durable, so a failure is logged.
 * Returns the event id, or null when nobody wanted the event.
 */
export async function emitWebhookEvent(
  svc: EmitServices,
  stationId: string,
  type: WebhookEventType,
  data: unknown,
  onlyWebhookId?: string,
): Promise<string | null> {
  try {
    const targets = onlyWebhookId ? [{ id: onlyWebhookId, failing: false }] : await svc.webhooks.targets(stationId, type);
    if (targets.length === 0) return null;
    const eventId = newEventId();
    const timestamp = svc.clock.now().toISOString();
    await Promise.all(
      targets.map(({ id: webhookId, failing }) =>
        svc.jobs.enqueue(
          failing ? 'webhooks.retry' : 'webhooks.deliver',
          { webhookId, stationId, eventId, type, timestamp, data, attempt: 1 },
          { jobId: deliveryJobId(eventId, webhookId, 1) },
        ),
      ),
    );
    return eventId;
  } catch (err) {
    svc.logger.warn({ err, stationId, type }, 'could not queue a webhook event');
    return null;
  }
}

/** Emits once the transaction has committed (nothing when it rolls back). */
export function emitAfterCommit(
  tx: Tx,
  svc: EmitServices,
  stationId: string,
  type: WebhookEventType,
  data: unknown | (() => unknown),
): void {
  tx.afterCommit(() => emitWebhookEvent(svc, stationId, type, typeof data === 'function' ? (data as () => unknown)() : data));
}
