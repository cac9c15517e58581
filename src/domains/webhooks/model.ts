import type { WebhookView } from './schemas.ts';

export interface WebhookRow {
  id: string;
  station_id: string;
  url: string;
  events: string[];
  description: string | null;
  active: boolean;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  type: string;
  attempt: number;
  status: 'pending' | 'succeeded' | 'retrying' | 'failed';
  http_status: number | null;
  duration_ms: number | null;
  error: string | null;
  response_body: string | null;
  created_at: Date;
  next_attempt_at: Date | null;
}

/**
 * Retry delays after attempt 1, 2, … (about 5 s, 30 s, 2 min, 10 min, 1 h, 6 h, then every 6 h:
 * docs/webhooks.md#what-a-delivery-looks-like).
 */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000];
export const retryDelayMs = (attempt: number): number => RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1];
/** Attempts stop this long after the event. */
export const RETRY_WINDOW_MS = 24 * 3600_000;
/** An endpoint that failed every attempt for this long is switched off. */
export const DEACTIVATE_AFTER_MS = 3 * 24 * 3600_000;
/** A rotated-out secret keeps signing (beside the new one) this long. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;
/** The delivery log keeps attempts this long. */
export const LOG_RETENTION_MS = 7 * 24 * 3600_000;

export const presentWebhook = (row: WebhookRow): WebhookView => ({
  id: row.id,
  url: row.url,
  events: row.events,
  description: row.description,
  active: row.active,
  createdAt: row.created_at.toISOString(),
});
