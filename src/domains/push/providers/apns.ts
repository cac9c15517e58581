import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { rootCertificates } from 'node:tls';
import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import type { ApnsSettings } from './credentials.ts';
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

// APNs over HTTP/2 + TLS with an ES256 provider token (docs/push.md#provider-wire-formats). The token is reused
// for 30 minutes (APNs refuses one older than an hour and treats refreshing more often than every 20
// minutes as abuse); requests share a few long-lived sessions per origin (connect storms are abuse too).
// @parse/node-apn is not used: it can be pointed at another host, but it keeps its own connection and
// token policy we could not test or bound, and the wire format is this one file.

const SESSIONS_PER_ORIGIN = 2;
const TOKEN_REUSE_MS = 30 * 60_000;

/** Extra trusted CAs for in-process tests, where NODE_EXTRA_CA_CERTS (read at process start) cannot be set. */
let extraCa: string | null = null;
export function trustApnsCaForTests(ca: string | null): void {
  extraCa = ca;
  for (const list of sessions.values()) for (const s of list) s.close();
  sessions.clear();
}

const sessions = new Map<string, ClientHttp2Session[]>();
let turn = 0;

function session(origin: string): ClientHttp2Session {
  let list = sessions.get(origin);
  if (!list) sessions.set(origin, (list = []));
  const live = list.filter((s) => !s.closed && !s.destroyed);
  if (live.length !== list.length) sessions.set(origin, (list = live));
  if (list.length < SESSIONS_PER_ORIGIN) {
    const created = connect(origin, extraCa ? { ca: [...rootCertificates, extraCa] } : {});
    const drop = () => {
      const current = sessions.get(origin);
      if (current)
        sessions.set(
          origin,
          current.filter((s) => s !== created),
        );
    };
    created.on('error', drop);
    created.on('goaway', drop);
    created.on('close', drop);
    created.setTimeout(10 * 60_000, () => created.close());
    created.unref();
    list.push(created);
    return created;
  }
  return list[turn++ % list.length];
}

export function closeApnsSessions(): void {
  for (const list of sessions.values()) for (const s of list) s.close();
  sessions.clear();
}

interface ProviderToken {
  value: string;
  issuedAt: number;
}
const providerTokens = new Map<string, Promise<ProviderToken>>();

type Apns = ApnsSettings & { secret: string | null; version: string };

async function providerToken(creds: Apns, now: () => number, stale?: string): Promise<string> {
  const cached = providerTokens.get(creds.version);
  if (cached) {
    const token = await cached.catch(() => null);
    if (token && token.value !== stale && now() - token.issuedAt < TOKEN_REUSE_MS) return token.value;
    if (providerTokens.get(creds.version) !== cached) return providerToken(creds, now, stale);
  }
  const issuedAt = now();
  const making = new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: creds.keyId })
    .setIssuer(creds.teamId)
    .setIssuedAt(Math.floor(issuedAt / 1000))
    .sign(createPrivateKey(creds.secret as string))
    .then((value) => ({ value, issuedAt }));
  providerTokens.set(creds.version, making);
  return (await making).value;
}

interface Answer {
  status: number;
  reason: string | undefined;
  retryAfter: string | undefined;
}

function post(origin: string, path: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session(origin).request({ ':method': 'POST', ':path': path, ...headers });
    let status = 0;
    let retryAfter: string | undefined;
    let text = '';
    stream.setEncoding('utf8');
    stream.setTimeout(timeoutMs, () => {
      stream.close(constants.NGHTTP2_CANCEL);
      reject(new Error('timeout'));
    });
    stream.on('response', (h) => {
      status = Number(h[':status']);
      retryAfter = h['retry-after'] as string | undefined;
    });
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('end', () => {
      let reason: string | undefined;
      try {
        reason = text ? (JSON.parse(text) as { reason?: string }).reason : undefined;
      } catch {
        reason = undefined;
      }
      resolve({ status, reason, retryAfter });
    });
    stream.on('error', reject);
    stream.end(body);
  });
}

const DEAD_REASONS = new Set(['BadDeviceToken', 'DeviceTokenNotForTopic']);

function classify(answer: Answer): Outcome | 'auth' {
  if (answer.status === 200) return { result: 'sent' };
  if (answer.status === 410) return { result: 'pruned', reason: describeAnswer(410, answer.reason) };
  if (answer.status === 400 && answer.reason && DEAD_REASONS.has(answer.reason)) return { result: 'pruned', reason: answer.reason };
  if (answer.status === 403) return 'auth';
  if (answer.status === 429 || answer.status >= 500)
    return { result: 'retry', reason: describeAnswer(answer.status, answer.reason), retryAfterMs: retryAfterMs(answer.retryAfter) };
  return { result: 'failed', reason: describeAnswer(answer.status, answer.reason) };
}

/** `now`: the service clock (ms), which decides when the provider token is renewed. */
export function apnsSender(creds: Apns, settings: { baseUrl: string; timeoutMs: number; now: () => number }): PushSender {
  const origin = new URL(settings.baseUrl).origin;
  return {
    provider: 'apns',
    maxBatch: 200,
    async send(deviceTokens: string[], message: PushMessage, options: SendOptions): Promise<void> {
      const alert: Record<string, string> = { title: message.title };
      if (message.body !== null) alert.body = message.body;
      const body = JSON.stringify({ ...messageData(message), aps: { alert } });
      const headers: Record<string, string> = {
        'apns-topic': creds.bundleId,
        'apns-push-type': 'alert',
        'apns-priority': urgent(message) ? '10' : '5',
        'apns-expiration': String(message.expiresAtUnix),
        'content-type': 'application/json',
      };
      if (message.collapseKey !== null) headers['apns-collapse-id'] = message.collapseKey;
      let bearer = await providerToken(creds, settings.now);
      const send = (token: string) =>
        post(origin, `/3/device/${encodeURIComponent(token)}`, { ...headers, authorization: `bearer ${bearer}` }, body, settings.timeoutMs);
      const one = async (token: string, i: number): Promise<Outcome> => {
        let answer: Answer;
        try {
          let go = mayStart(options.gate, i);
          if (go !== true && !(await go)) return { result: 'unsent' };
          answer = await send(token);
          let outcome = classify(answer);
          if (outcome === 'auth') {
            bearer = await providerToken(creds, settings.now, bearer);
            go = mayStart(options.gate, i);
            if (go !== true && !(await go)) return { result: 'unsent' };
            answer = await send(token);
            outcome = classify(answer);
            if (outcome === 'auth')
              throw new CredentialsRefusedError(`apns refused the credentials: ${describeAnswer(answer.status, answer.reason)}`);
          }
          return outcome;
        } catch (err) {
          if (err instanceof CredentialsRefusedError) throw err;
          return { result: 'failed', reason: 'no answer from apns' };
        }
      };
      await mapConcurrent(deviceTokens, options.concurrency, async (token, i) => options.onOutcome(i, await one(token, i)));
    },
  };
}
