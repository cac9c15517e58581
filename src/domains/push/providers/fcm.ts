import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import type { FcmSettings } from './credentials.ts';
import { httpRequest, neverSent } from '../../../lib/httpClient.ts';
import {
  CredentialsRefusedError,
  describeAnswer,
  mapConcurrent,
  mayStart,
  messageData,
  retryAfterMs,
  type Outcome,
  type PushMessage,
  type PushSender,
  type SendOptions,
  urgent,
} from './types.ts';

// FCM HTTP v1 (docs/push.md#provider-wire-formats): an OAuth 2.0 access token from the
// JWT-bearer grant (RS256 assertion by the service account, aud = token_uri), reused until a few minutes
// before it expires, then one `messages:send` per device. firebase-admin is not used: its FCM host is
// fixed, so it cannot be pointed at a test server or a proxy.

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const REFRESH_BEFORE_MS = 5 * 60_000;

interface AccessToken {
  value: string;
  expiresAt: number;
}
/** Access tokens per credentials version (station + updatedAt), shared by every notification in the process. */
const tokens = new Map<string, Promise<AccessToken>>();

type Fcm = FcmSettings & { secret: string | null; version: string };

async function fetchAccessToken(creds: Fcm, timeoutMs: number): Promise<AccessToken> {
  const key = createPrivateKey(creds.secret as string);
  const assertion = await new SignJWT({ scope: FCM_SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(creds.clientEmail)
    .setAudience(creds.tokenUri)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key);
  const answer = await httpRequest(creds.tokenUri, {
    method: 'POST',
    pooled: true,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
    timeoutMs,
  });
  let body: { access_token?: string; expires_in?: number; error?: string; error_description?: string } = {};
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = {};
  }
  if (answer.status === 429 || answer.status >= 500)
    throw new TokenUnavailable(describeAnswer(answer.status, body.error), answer.headers['retry-after']);
  if (answer.status !== 200 || typeof body.access_token !== 'string') {
    throw new CredentialsRefusedError(
      `fcm token endpoint refused the service account: ${describeAnswer(answer.status, body.error ?? body.error_description)}`,
    );
  }
  return { value: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000 };
}

class TokenUnavailable extends Error {
  readonly retryAfter: string | string[] | undefined;
  constructor(message: string, retryAfter: string | string[] | undefined) {
    super(message);
    this.retryAfter = retryAfter;
  }
}

/** The cached access token, or a new one (one fetch at a time per credentials version). */
async function accessToken(creds: Fcm, timeoutMs: number, stale?: string): Promise<string> {
  const cached = tokens.get(creds.version);
  if (cached) {
    const token = await cached.catch(() => null);
    if (token && token.value !== stale && token.expiresAt - REFRESH_BEFORE_MS > Date.now()) return token.value;
    if (tokens.get(creds.version) !== cached) return accessToken(creds, timeoutMs, stale);
  }
  const fetching = fetchAccessToken(creds, timeoutMs);
  tokens.set(creds.version, fetching);
  fetching.catch(() => {
    if (tokens.get(creds.version) === fetching) tokens.delete(creds.version);
  });
  return (await fetching).value;
}

interface FcmError {
  error?: { code?: number; status?: string; message?: string; details?: Array<{ errorCode?: string }> };
}

function fcmStatus(text: string): string | undefined {
  try {
    return (JSON.parse(text) as FcmError).error?.status;
  } catch {
    return undefined;
  }
}

function classify(status: number, text: string, retryAfter: string | string[] | undefined): Outcome | 'auth' {
  if (status === 200) return { result: 'sent' };
  let body: FcmError = {};
  try {
    body = JSON.parse(text);
  } catch {
    body = {};
  }
  const errorCodes = (body.error?.details ?? []).map((d) => d.errorCode).filter(Boolean);
  const reason = errorCodes[0] ?? body.error?.status;
  if (status === 404 && errorCodes.includes('UNREGISTERED')) return { result: 'pruned', reason: 'UNREGISTERED' };
  if (status === 400 && (body.error?.status === 'INVALID_ARGUMENT' || errorCodes.includes('INVALID_ARGUMENT'))) {
    if (/registration token/i.test(body.error?.message ?? '')) return { result: 'pruned', reason: 'INVALID_ARGUMENT (registration token)' };
  }
  if (status === 401 || status === 403) return 'auth';
  if (status === 429 || status >= 500)
    return { result: 'retry', reason: describeAnswer(status, reason), retryAfterMs: retryAfterMs(retryAfter) };
  return { result: 'failed', reason: describeAnswer(status, reason) };
}

export function fcmSender(creds: Fcm, settings: { baseUrl: string; timeoutMs: number }): PushSender {
  const endpoint = `${settings.baseUrl}/v1/projects/${encodeURIComponent(creds.projectId)}/messages:send`;
  return {
    provider: 'fcm',
    maxBatch: 200,
    async send(deviceTokens: string[], message: PushMessage, options: SendOptions): Promise<void> {
      const data = messageData(message);
      const android: Record<string, unknown> = { ttl: `${message.ttlSeconds}s`, priority: urgent(message) ? 'HIGH' : 'NORMAL' };
      if (message.collapseKey !== null) android.collapse_key = message.collapseKey;
      const apnsHeaders: Record<string, string> = { 'apns-expiration': String(message.expiresAtUnix) };
      if (message.collapseKey !== null) apnsHeaders['apns-collapse-id'] = message.collapseKey;
      const notification: Record<string, string> = { title: message.title };
      if (message.body !== null) notification.body = message.body;
      // The JSON around the token is the same for every device: built once, the token spliced in.
      const template = JSON.stringify({ message: { token: '\u0000', notification, data, android, apns: { headers: apnsHeaders } } });
      const [head, tail] = template.split('"\\u0000"');
      let bearer: string;
      try {
        bearer = await accessToken(creds, settings.timeoutMs);
      } catch (err) {
        let outcome: Outcome | null = null;
        if (err instanceof TokenUnavailable) outcome = { result: 'retry', reason: err.message, retryAfterMs: retryAfterMs(err.retryAfter) };
        else if (neverSent(err)) outcome = { result: 'retry', reason: 'token endpoint unreachable', retryAfterMs: null };
        if (outcome === null) throw err;
        for (let i = 0; i < deviceTokens.length; i++) options.onOutcome(i, outcome);
        return;
      }
      const post = (token: string, access: string) =>
        httpRequest(endpoint, {
          method: 'POST',
          pooled: true,
          headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json; charset=utf-8' },
          body: head + JSON.stringify(token) + tail,
          timeoutMs: settings.timeoutMs,
        });
      const one = async (token: string, i: number): Promise<Outcome> => {
        try {
          let go = mayStart(options.gate, i);
          if (go !== true && !(await go)) return { result: 'unsent' };
          let answer = await post(token, bearer);
          let outcome = classify(answer.status, answer.text, answer.headers['retry-after']);
          if (outcome === 'auth') {
            // One fresh token, then the answer stands.
            bearer = await accessToken(creds, settings.timeoutMs, bearer);
            go = mayStart(options.gate, i);
            if (go !== true && !(await go)) return { result: 'unsent' };
            answer = await post(token, bearer);
            outcome = classify(answer.status, answer.text, answer.headers['retry-after']);
            if (outcome === 'auth') {
              throw new CredentialsRefusedError(`fcm refused the credentials: ${describeAnswer(answer.status, fcmStatus(answer.text))}`);
            }
          }
          return outcome;
        } catch (err) {
          if (err instanceof CredentialsRefusedError) throw err;
          if (err instanceof TokenUnavailable) return { result: 'retry', reason: err.message, retryAfterMs: retryAfterMs(err.retryAfter) };
          if (neverSent(err)) return { result: 'retry', reason: 'connection refused', retryAfterMs: null };
          return { result: 'failed', reason: 'no answer from fcm' };
        }
      };
      await mapConcurrent(deviceTokens, options.concurrency, async (token, i) => options.onOutcome(i, await one(token, i)));
    },
  };
}
