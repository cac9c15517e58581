import type { Services } from '../../services.ts';
import { newId } from '../../lib/ids.ts';
import type { JobPayload } from '../../jobs.ts';
import { deliveryJobId } from './emit.ts';
import { DEACTIVATE_AFTER_MS, LOG_RETENTION_MS, RETRY_WINDOW_MS, retryDelayMs, type DeliveryRow, type WebhookRow } from './model.ts';
import { decryptSecret, signatureOf } from './secrets.ts';
import { postDelivery, type AttemptResult } from './transport.ts';

// One delivery attempt of one event to one webhook (the `webhooks.deliver` job). The attempt is logged
// once (unique per webhook, event and attempt: a job re-run after a worker crash posts again — receivers
// deduplicate by `webhook-id` — but logs and schedules once). A failure schedules the next attempt as a
// delayed job of its own until 24 h after the event; an endpoint failing every attempt for 3 days is
// switched off.

export type DeliveryPayload = JobPayload<'webhooks.deliver' | 'webhooks.retry'>;

/**
 * Attempts one endpoint may have in flight in one worker process. On the fast lane, beyond the cap an
 * event moves to the slow lane (no attempt); on the slow lane it is logged as failed (`endpoint busy`)
 * and retried on the normal schedule. An endpoint that is failing gets one attempt at a time there (a
 * probe), so many dead endpoints together still leave most of the slow lane to slow but living ones.
 */
export const MAX_IN_FLIGHT_PER_ENDPOINT = { fast: 32, slow: 8, failing: 1 } as const;
/**
 * An endpoint with an attempt in flight for longer than this is slow: its next fast-lane events move to
 * the slow lane. A receiver that hangs holds at most about half a second's worth of its events' slots.
 */
export const SLOW_AFTER_MS = 500;
/** Start times (performance.now()) of the attempts in flight, per endpoint, in this worker process. */
const inFlight = new Map<string, Set<number>>();

const isSlow = (webhookId: string): boolean => {
  const started = inFlight.get(webhookId);
  if (!started) return false;
  const limit = performance.now() - SLOW_AFTER_MS;
  for (const at of started) if (at < limit) return true;
  return false;
};

export function signedHeaders(secrets: string[], eventId: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signatureOf(secret, eventId, timestamp, body)).join(' '),
  };
}

/** The signing secrets in force at `now`: the current one, and the previous one during a rotation's overlap. */
export function secretsInForce(svc: Pick<Services, 'config'>, hook: WebhookRow, now: Date): string[] {
  const secrets = [decryptSecret(svc.config.secret, hook.secret_enc)];
  if (hook.previous_secret_enc && hook.previous_secret_expires_at && hook.previous_secret_expires_at > now) {
    secrets.push(decryptSecret(svc.config.secret, hook.previous_secret_enc));
  }
  return secrets;
}

export async function deliverWebhook(
  svc: Services,
  payload: DeliveryPayload,
  lane: 'fast' | 'slow' = 'fast',
): Promise<{ status: DeliveryRow['status'] | 'skipped' | 'moved to the slow lane' }> {
  const hook = await svc.db<WebhookRow>('webhooks').where({ id: payload.webhookId }).first();
  // Deleted, or switched off meanwhile: nothing to deliver (a `ping` from /test still goes out).
  if (!hook || (!hook.active && payload.type !== 'ping')) return { status: 'skipped' };
  if (
    lane === 'fast' &&
    payload.type !== 'ping' &&
    (hook.failing_since !== null || isSlow(hook.id) || (inFlight.get(hook.id)?.size ?? 0) >= MAX_IN_FLIGHT_PER_ENDPOINT.fast)
  ) {
    // Queued before the endpoint was known to fail, or while it hangs or has its fill of attempts in
    // flight: not an attempt, just a move, so its backlog never holds the fast lane's slots.
    await svc.jobs.enqueue('webhooks.retry', payload, { jobId: deliveryJobId(payload.eventId, hook.id, payload.attempt) });
    return { status: 'moved to the slow lane' };
  }
  const body = JSON.stringify({ type: payload.type, timestamp: payload.timestamp, stationId: payload.stationId, data: payload.data });
  const startedAt = svc.clock.now();
  const result = await attempt(svc, hook, payload, body, startedAt, lane);
  const finishedAt = svc.clock.now();
  const eventAt = new Date(payload.timestamp).getTime();
  let status: DeliveryRow['status'] = 'succeeded';
  let nextAttemptAt: Date | null = null;
  if (!result.ok) {
    const next = finishedAt.getTime() + retryDelayMs(payload.attempt);
    if (next < eventAt + RETRY_WINDOW_MS) {
      status = 'retrying';
      nextAttemptAt = new Date(next);
    } else {
      status = 'failed';
    }
  }
  const inserted = await svc
    .db('webhook_deliveries')
    .insert({
      id: newId(),
      webhook_id: hook.id,
      event_id: payload.eventId,
      type: payload.type,
      attempt: payload.attempt,
      status,
      http_status: result.httpStatus,
      duration_ms: result.durationMs,
      error: result.error,
      response_body: result.responseBody,
      created_at: finishedAt,
      next_attempt_at: nextAttemptAt,
    })
    .onConflict(['webhook_id', 'event_id', 'attempt'])
    .ignore()
    .returning('id');
  await recordHealth(svc, hook, result.ok, finishedAt);
  if (nextAttemptAt) {
    const next = { ...payload, attempt: payload.attempt + 1 };
    await svc.jobs.enqueue('webhooks.retry', next, {
      jobId: deliveryJobId(payload.eventId, hook.id, next.attempt),
      delay: retryDelayMs(payload.attempt),
    });
  }
  // The log keeps 7 days: trimmed now and then by the deliveries that write it (reads filter by age too).
  if (inserted.length && Math.random() < 0.02) {
    await svc
      .db('webhook_deliveries')
      .where('webhook_id', hook.id)
      .andWhere('created_at', '<', new Date(finishedAt.getTime() - LOG_RETENTION_MS))
      .delete();
  }
  return { status };
}

async function attempt(
  svc: Services,
  hook: WebhookRow,
  payload: DeliveryPayload,
  body: string,
  now: Date,
  lane: 'fast' | 'slow',
): Promise<AttemptResult> {
  let started = inFlight.get(hook.id);
  const cap = lane === 'fast' ? Infinity : MAX_IN_FLIGHT_PER_ENDPOINT[hook.failing_since ? 'failing' : 'slow'];
  if (started && started.size >= cap) {
    // A slow or dead endpoint holds at most this many of the worker's slots; the rest wait for their retry.
    return {
      ok: false,
      httpStatus: null,
      durationMs: 0,
      error: `endpoint busy: ${started.size} deliveries already in flight`,
      responseBody: null,
    };
  }
  if (!started) inFlight.set(hook.id, (started = new Set()));
  let mark = performance.now();
  while (started.has(mark)) mark += 1e-6;
  started.add(mark);
  try {
    const timestamp = Math.floor(now.getTime() / 1000);
    const headers = signedHeaders(secretsInForce(svc, hook, now), payload.eventId, timestamp, body);
    return await postDelivery(hook.url, headers, body, svc.config.webhooks.allowInsecure);
  } finally {
    started.delete(mark);
    if (started.size === 0 && inFlight.get(hook.id) === started) inFlight.delete(hook.id);
  }
}

/** Success clears the failure streak; a failure starts it, and ends the endpoint after 3 days of failures. */
async function recordHealth(svc: Services, hook: WebhookRow, ok: boolean, now: Date): Promise<void> {
  if (ok) {
    if (hook.failing_since) {
      // Healthy again: its fresh events go back to the fast lane.
      await svc.db('webhooks').where({ id: hook.id }).update({ failing_since: null });
      await svc.invalidation.invalidate('webhooks', hook.station_id);
    }
    return;
  }
  const [row] = await svc
    .db('webhooks')
    .where({ id: hook.id })
    .update({
      failing_since: svc.db.raw('COALESCE(failing_since, ?)', [now]),
      active: svc.db.raw('CASE WHEN COALESCE(failing_since, ?) <= ? THEN false ELSE active END', [
        now,
        new Date(now.getTime() - DEACTIVATE_AFTER_MS),
      ]),
    })
    .returning<Array<{ active: boolean }>>('active');
  if (row && hook.active && !row.active) {
    svc.logger.warn({ webhookId: hook.id, stationId: hook.station_id }, 'webhook switched off after 3 days of failed deliveries');
    await svc.invalidation.invalidate('webhooks', hook.station_id);
  } else if (!hook.failing_since) {
    // Failing from now on: its fresh events take the slow lane, away from healthy endpoints.
    await svc.invalidation.invalidate('webhooks', hook.station_id);
  }
}
