import type { PushProvider } from '../../stations/model.ts';

// The interface between the sending job (push/notifications/sending/) and one provider's wire format
// (fcm.ts, apns.ts, expo.ts): the job knows only this.

export interface PushMessage {
  notificationId: string;
  topic: 'alerts' | 'content' | 'reminders';
  title: string;
  body: string | null;
  url: string | null;
  data: Record<string, string>;
  ttlSeconds: number;
  collapseKey: string | null;
  /** Unix seconds after which the message is worthless (createdAt + ttlSeconds). */
  expiresAtUnix: number;
}

/**
 * What became of one device's message. `retry`: 429/5xx, send again after `retryAfterMs` (null: back
 * off). `unsent`: its request was never started (the gate said no: cancelled, or the claim was lost).
 */
export type Outcome =
  | { result: 'sent'; ticketId?: string }
  | { result: 'pruned'; reason: string }
  | { result: 'failed'; reason: string }
  | { result: 'retry'; reason: string; retryAfterMs: number | null }
  | { result: 'unsent' };

/**
 * Asked right before each provider request is started (in the same turn as the request), for the
 * tokens it carries (`count` from `first`): true, start it; false, never start it; a promise, wait for it
 * (a renewal of the claim's lease) and ask again.
 */
export type Gate = (first: number, count: number) => boolean | Promise<unknown>;

/** The gate's answer, synchronously when it has one (so nothing runs between the check and the request). */
export function mayStart(gate: Gate, first: number, count = 1): boolean | Promise<boolean> {
  const answer = gate(first, count);
  return typeof answer === 'boolean' ? answer : answer.then(() => mayStart(gate, first, count));
}

export interface SendOptions {
  /** Requests in flight at once. */
  concurrency: number;
  gate: Gate;
  /** Called with each device's outcome as soon as it is known (`index` into the tokens). */
  onOutcome(index: number, outcome: Outcome): void;
}

/** The provider refused the station's credentials (after one fresh token): the notification fails with this message. */
export class CredentialsRefusedError extends Error {}

export interface PushSender {
  readonly provider: PushProvider;
  /** Most devices one `send` may carry (Expo: 100 messages a request). */
  readonly maxBatch: number;
  /** Sends to every token, reporting each outcome through `onOutcome` as it comes; throws CredentialsRefusedError. */
  send(tokens: string[], message: PushMessage, options: SendOptions): Promise<void>;
}

/**
 * Whether the provider should deliver at once (FCM HIGH, APNs 10, Expo high): alerts, and reminders,
 * which are worthless once the show has started; content may wait for the device's next wake-up.
 */
export const urgent = (message: PushMessage): boolean => message.topic !== 'content';

/** The data every platform's app receives beside the station's own `data` (docs/push.md). */
export function messageData(message: PushMessage): Record<string, string> {
  const data: Record<string, string> = { ...message.data, notificationId: message.notificationId, topic: message.topic };
  if (message.url !== null) data.url = message.url;
  return data;
}

/** Retry-After (seconds or an HTTP date) in ms; null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined | null, now = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim()) * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Runs `fn` over `items` with at most `concurrency` at once; results in input order. */
export async function mapConcurrent<T, R>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let stopped = false;
  // The first error stops every lane (a refused credential must not keep sending).
  const lanes = Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, async () => {
    while (!stopped && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (err) {
        stopped = true;
        throw err;
      }
    }
  });
  await Promise.all(lanes);
  return results;
}

/** A short, secret-free description of a provider's answer, for `error` and logs. */
export const describeAnswer = (status: number, reason: string | undefined): string => (reason ? `${status} ${reason}` : `${status}`);
