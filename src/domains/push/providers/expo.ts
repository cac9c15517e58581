import type { ExpoSettings } from './credentials.ts';
import { httpRequest, neverSent } from '../../../lib/httpClient.ts';
import {
  CredentialsRefusedError,
  describeAnswer,
  mayStart,
  messageData,
  retryAfterMs,
  type Outcome,
  type PushMessage,
  type PushSender,
  type SendOptions,
  urgent,
} from './types.ts';

// Expo's push API (docs/push.md#provider-wire-formats): batches of at most 100 messages, one ticket each; the
// receipts are fetched later (receipts()). expo-server-sdk is not used: its base URL comes from a
// process-wide environment variable rather than per client, it retries on its own schedule (we honour
// Retry-After and count `retried`), and the wire format is two small JSON requests.

type Expo = ExpoSettings & { secret: string | null; version: string };

interface Ticket {
  status?: 'ok' | 'error';
  id?: string;
  message?: string;
  details?: { error?: string };
}

function headers(creds: Expo): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (creds.secret) h.authorization = `Bearer ${creds.secret}`;
  return h;
}

function refused(status: number, text: string): CredentialsRefusedError {
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { errors?: Array<{ code?: string }> }).errors?.[0]?.code;
  } catch {
    code = undefined;
  }
  return new CredentialsRefusedError(`expo refused the access token: ${describeAnswer(status, code)}`);
}

export function expoSender(creds: Expo, settings: { baseUrl: string; timeoutMs: number }): PushSender {
  return {
    provider: 'expo',
    maxBatch: 100,
    async send(deviceTokens: string[], message: PushMessage, options: SendOptions): Promise<void> {
      const outcomes = await sendBatch(creds, settings, deviceTokens, message, options);
      for (const [i, outcome] of outcomes.entries()) options.onOutcome(i, outcome);
    },
  };
}

/** One Expo request carrying every token (at most 100), unless the gate says no first (asked once, for all of them). */
async function sendBatch(
  creds: Expo,
  settings: { baseUrl: string; timeoutMs: number },
  deviceTokens: string[],
  message: PushMessage,
  options: SendOptions,
): Promise<Outcome[]> {
  const data = messageData(message);
  const messages = deviceTokens.map((to) => {
    const m: Record<string, unknown> = {
      to,
      title: message.title,
      data,
      ttl: message.ttlSeconds,
      priority: urgent(message) ? 'high' : 'normal',
    };
    if (message.body !== null) m.body = message.body;
    if (message.collapseKey !== null) m.collapseId = message.collapseKey;
    return m;
  });
  let answer;
  const go = mayStart(options.gate, 0, deviceTokens.length);
  if (go !== true && !(await go)) return deviceTokens.map(() => ({ result: 'unsent' }));
  try {
    answer = await httpRequest(`${settings.baseUrl}/--/api/v2/push/send`, {
      method: 'POST',
      pooled: true,
      headers: headers(creds),
      body: JSON.stringify(messages),
      timeoutMs: settings.timeoutMs,
    });
  } catch (err) {
    const outcome: Outcome = neverSent(err)
      ? { result: 'retry', reason: 'connection refused', retryAfterMs: null }
      : { result: 'failed', reason: 'no answer from expo' };
    return deviceTokens.map(() => outcome);
  }
  if (answer.status === 401 || answer.status === 403) throw refused(answer.status, answer.text);
  if (answer.status === 429 || answer.status >= 500) {
    const outcome: Outcome = {
      result: 'retry',
      reason: describeAnswer(answer.status, undefined),
      retryAfterMs: retryAfterMs(answer.headers['retry-after']),
    };
    return deviceTokens.map(() => outcome);
  }
  let tickets: Ticket[] = [];
  try {
    tickets = (JSON.parse(answer.text) as { data?: Ticket[] }).data ?? [];
  } catch {
    tickets = [];
  }
  if (answer.status !== 200 || tickets.length !== deviceTokens.length) {
    const outcome: Outcome = { result: 'failed', reason: `expo answered ${answer.status} without a ticket per message` };
    return deviceTokens.map(() => outcome);
  }
  return tickets.map((t): Outcome => {
    if (t.status === 'ok') return t.id ? { result: 'sent', ticketId: t.id } : { result: 'sent' };
    if (t.details?.error === 'DeviceNotRegistered') return { result: 'pruned', reason: 'DeviceNotRegistered' };
    return { result: 'failed', reason: t.details?.error ?? 'expo ticket error' };
  });
}

/** Receipts of tickets (at most 1000 ids a request): id → null (ok or unknown yet) | the error. */
export async function expoReceipts(
  creds: Expo,
  ids: string[],
  options: { baseUrl: string; timeoutMs: number },
): Promise<Map<string, string | null>> {
  const answer = await httpRequest(`${options.baseUrl}/--/api/v2/push/getReceipts`, {
    method: 'POST',
    pooled: true,
    headers: headers(creds),
    body: JSON.stringify({ ids }),
    timeoutMs: options.timeoutMs,
  });
  if (answer.status !== 200) throw new Error(`expo receipts answered ${answer.status}`);
  const data = (JSON.parse(answer.text) as { data?: Record<string, Ticket> }).data ?? {};
  const result = new Map<string, string | null>();
  for (const [id, receipt] of Object.entries(data)) {
    result.set(id, receipt.status === 'error' ? (receipt.details?.error ?? receipt.message ?? 'error') : null);
  }
  return result;
}
