import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtVerify, decodeProtectedHeader } from 'jose';

// Local stand-ins for FCM, APNs and Expo that speak each provider's real wire format
// (docs/push.md#provider-wire-formats) and verify what a real one verifies: FCM the RS256 JWT-bearer
// assertion (aud = token_uri, iss, scope) and the bearer access token; APNs the ES256 provider token
// (kid, iss) and the apns-* headers, over HTTP/2 + TLS with a throw-away CA made with openssl; Expo its
// batches and receipts. A script decides each device's answer.

/** How a fake answers one device: ok, a dead-token answer, 429 (Retry-After seconds), 503, or refused credentials. */
export type Answer = 'ok' | 'dead' | 'invalid' | { status: 429; retryAfter: number } | 503 | 'auth' | 'hang';
export type Script = (deviceToken: string, nth: number) => Answer;

export interface Sent {
  token: string;
  headers: Record<string, unknown>;
  body: any;
  /** Date.now() when the request came (FCM). */
  at?: number;
}

interface Base {
  url: string;
  sent: Sent[];
  /** Requests per device token (every attempt). */
  perDevice: Map<string, number>;
  script: Script;
  /** While true, every answer waits (its request counted in `sent`) until `release()`. */
  holding: boolean;
  /** Answers waiting now. */
  held(): number;
  /** Stops holding and lets every waiting answer go. */
  release(): void;
  close(): Promise<void>;
}

/** The holding part of a fake: `wait()` resolves at once unless the fake is holding. */
function holder(fake: Base): { wait(): Promise<void> } {
  let waiting: Array<() => void> = [];
  fake.holding = false;
  fake.held = () => waiting.length;
  fake.release = () => {
    fake.holding = false;
    const go = waiting;
    waiting = [];
    for (const resolve of go) resolve();
  };
  return { wait: () => (fake.holding ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve()) };
}

const countOf = (map: Map<string, number>, token: string): number => {
  const n = (map.get(token) ?? 0) + 1;
  map.set(token, n);
  return n;
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
  });
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function listen(server: Server | Http2SecureServer): Promise<number> {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return (server.address() as AddressInfo).port;
}

function closer(server: Server | Http2SecureServer): () => Promise<void> {
  return () =>
    new Promise<void>((ok) => {
      (server as Server).closeAllConnections?.();
      server.close(() => ok());
    });
}

// ---- FCM ----

export interface ServiceAccount {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  token_uri: string;
}

export interface FakeFcm extends Base {
  account: ServiceAccount;
  /** Access tokens issued (one per token request). */
  issued: string[];
  /** Token requests whose assertion did not verify. */
  badAssertions: number;
  /** Refuse every access token (the project's credentials were revoked): 401 on send, 400 invalid_grant on token. */
  revoked: boolean;
  /** Milliseconds each messages:send answer is held back (a slow provider), plus up to `jitterMs` more at random. */
  delayMs: number;
  jitterMs: number;
  /** Tokens whose 200 answer was written out in full (what the provider accepted). */
  accepted: string[];
}

export async function startFakeFcm(script: Script = () => 'ok', options: { expiresIn?: number } = {}): Promise<FakeFcm> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const issued = new Set<string>();
  const fake = {} as FakeFcm;
  const hold = holder(fake);
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.url === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(body);
      try {
        if (fake.revoked) throw new Error('revoked');
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') throw new Error('grant_type');
        const { payload } = await jwtVerify(form.get('assertion') ?? '', publicKey, {
          algorithms: ['RS256'],
          audience: fake.account.token_uri,
          issuer: fake.account.client_email,
        });
        if (payload.scope !== 'https://www.googleapis.com/auth/firebase.messaging') throw new Error('scope');
      } catch {
        fake.badAssertions++;
        return json(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
      }
      const token = `ya29.${randomBytes(24).toString('base64url')}`;
      issued.add(token);
      fake.issued.push(token);
      return json(res, 200, { access_token: token, expires_in: options.expiresIn ?? 3599, token_type: 'Bearer' });
    }
    const match = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(req.url ?? '');
    if (!match || req.method !== 'POST') return json(res, 404, { error: { code: 404, status: 'NOT_FOUND' } });
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    let parsed: any;
    try {
      parsed = JSON.parse(body);
    } catch {
      return json(res, 400, { error: { code: 400, status: 'INVALID_ARGUMENT', message: 'bad json' } });
    }
    const deviceToken = String(parsed?.message?.token);
    const nth = countOf(fake.perDevice, deviceToken);
    fake.sent.push({ token: deviceToken, headers: req.headers, body: parsed, at: Date.now() });
    const answer = fake.script(deviceToken, nth);
    await hold.wait();
    const delay = fake.delayMs + Math.random() * fake.jitterMs;
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (fake.revoked || !issued.has(bearer) || answer === 'auth' || match[1] !== fake.account.project_id)
      return json(res, 401, {
        error: { code: 401, status: 'UNAUTHENTICATED', message: 'Request had invalid authentication credentials.' },
      });
    if (answer === 'hang') return;
    if (answer === 'ok') {
      res.on('finish', () => fake.accepted.push(deviceToken));
      return json(res, 200, { name: `projects/${match[1]}/messages/${randomBytes(6).toString('hex')}` });
    }
    if (answer === 'dead')
      return json(res, 404, {
        error: {
          code: 404,
          status: 'NOT_FOUND',
          message: 'Requested entity was not found.',
          details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }],
        },
      });
    if (answer === 'invalid')
      return json(res, 400, {
        error: {
          code: 400,
          status: 'INVALID_ARGUMENT',
          message: 'The registration token is not a valid FCM registration token',
          details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' }],
        },
      });
    if (answer === 503)
      return json(res, 503, { error: { code: 503, status: 'UNAVAILABLE', message: 'The service is currently unavailable.' } });
    return json(
      res,
      429,
      { error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ errorCode: 'QUOTA_EXCEEDED' }] } },
      { 'retry-after': String(answer.retryAfter) },
    );
  });
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}`;
  Object.assign(fake, {
    url,
    sent: [],
    perDevice: new Map(),
    script,
    issued: [],
    badAssertions: 0,
    revoked: false,
    delayMs: 0,
    jitterMs: 0,
    accepted: [],
    close: closer(server),
    account: {
      type: 'service_account',
      project_id: 'waveline-test',
      private_key_id: randomBytes(8).toString('hex'),
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      client_email: 'push@waveline-test.iam.gserviceaccount.com',
      client_id: '1234567890',
      token_uri: `${url}/token`,
    },
  });
  return fake;
}

// ---- APNs ----

export interface TestCa {
  dir: string;
  caFile: string;
  ca: string;
  key: string;
  cert: string;
  remove(): void;
}

/** A throw-away CA and a server certificate for 127.0.0.1 / localhost, made with openssl. */
export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'waveline-apns-ca-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Waveline test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  run(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=localhost',
  );
  require_ext(dir);
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'san.cnf',
  );
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function require_ext(dir: string): void {
  execFileSync('sh', [
    '-c',
    `printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > ${JSON.stringify(join(dir, 'san.cnf'))}`,
  ]);
}

export interface ApnsKey {
  keyId: string;
  teamId: string;
  bundleId: string;
  privateKey: string;
  publicKey: KeyObject;
}

export function makeApnsKey(): ApnsKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    keyId: randomBytes(5).toString('hex').toUpperCase(),
    teamId: 'TEAM' + randomBytes(3).toString('hex').toUpperCase(),
    bundleId: 'fm.waveline.test',
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    publicKey,
  };
}

export interface FakeApns extends Base {
  key: ApnsKey;
  /** Distinct provider tokens seen, and TLS sessions opened. */
  providerTokens: Set<string>;
  connections: number;
  revoked: boolean;
  /** Problems with a request's headers or token (the test expects none). */
  problems: string[];
}

export async function startFakeApns(ca: TestCa, script: Script = () => 'ok'): Promise<FakeApns> {
  const key = makeApnsKey();
  const fake = {} as FakeApns;
  const hold = holder(fake);
  const server = createSecureServer({ key: ca.key, cert: ca.cert, allowHTTP1: false });
  server.on('secureConnection', () => fake.connections++);
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', async () => {
      const respond = (status: number, body?: unknown, extra: Record<string, string> = {}) => {
        if (stream.destroyed) return;
        stream.respond({ ':status': status, 'apns-id': randomBytes(8).toString('hex'), ...extra });
        stream.end(body === undefined ? undefined : JSON.stringify(body));
      };
      const path = String(headers[':path']);
      const match = /^\/3\/device\/([^/]+)$/.exec(path);
      if (headers[':method'] !== 'POST' || !match) return respond(404, { reason: 'BadPath' });
      const deviceToken = decodeURIComponent(match[1]);
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        fake.problems.push('body is not JSON');
      }
      const nth = countOf(fake.perDevice, deviceToken);
      fake.sent.push({ token: deviceToken, headers: { ...headers }, body });
      const bearer = String(headers.authorization ?? '').replace(/^bearer /, '');
      fake.providerTokens.add(bearer);
      try {
        const header = decodeProtectedHeader(bearer);
        if (header.kid !== fake.key.keyId || header.alg !== 'ES256') throw new Error('kid');
        const { payload } = await jwtVerify(bearer, fake.key.publicKey, { algorithms: ['ES256'], issuer: fake.key.teamId });
        if (typeof payload.iat !== 'number') throw new Error('iat');
      } catch {
        return respond(403, { reason: 'InvalidProviderToken' });
      }
      if (headers['apns-topic'] !== fake.key.bundleId) return respond(400, { reason: 'TopicDisallowed' });
      if (headers['apns-push-type'] !== 'alert') fake.problems.push(`apns-push-type ${headers['apns-push-type']}`);
      if (!['5', '10'].includes(String(headers['apns-priority']))) fake.problems.push(`apns-priority ${headers['apns-priority']}`);
      if (!/^\d+$/.test(String(headers['apns-expiration']))) fake.problems.push(`apns-expiration ${headers['apns-expiration']}`);
      const answer = fake.script(deviceToken, nth);
      await hold.wait();
      if (fake.revoked || answer === 'auth') return respond(403, { reason: 'InvalidProviderToken' });
      if (answer === 'hang') return;
      if (answer === 'ok') return respond(200);
      if (answer === 'dead') return respond(410, { reason: 'Unregistered', timestamp: Date.now() });
      if (answer === 'invalid') return respond(400, { reason: 'BadDeviceToken' });
      if (answer === 503) return respond(503, { reason: 'ServiceUnavailable' });
      return respond(429, { reason: 'TooManyRequests' }, { 'retry-after': String(answer.retryAfter) });
    });
  });
  const port = await listen(server);
  Object.assign(fake, {
    url: `https://127.0.0.1:${port}`,
    sent: [],
    perDevice: new Map(),
    script,
    key,
    providerTokens: new Set(),
    connections: 0,
    revoked: false,
    problems: [],
    close: closer(server),
  });
  return fake;
}

// ---- Expo ----

export interface FakeExpo extends Base {
  /** Size of each send request. */
  batches: number[];
  receiptRequests: string[][];
  /** Tokens whose receipt (not ticket) says DeviceNotRegistered. */
  deadOnReceipt: Set<string>;
  accessToken: string | null;
  /** Request-level answer for the next send requests (429/503/401), consumed one per request. */
  requestAnswers: Array<{ status: number; retryAfter?: number }>;
}

export async function startFakeExpo(script: Script = () => 'ok', options: { accessToken?: string } = {}): Promise<FakeExpo> {
  const fake = {} as FakeExpo;
  const hold = holder(fake);
  const tickets = new Map<string, string>();
  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    if (fake.accessToken !== null && req.headers.authorization !== `Bearer ${fake.accessToken}`)
      return json(res, 401, { errors: [{ code: 'UNAUTHORIZED', message: 'The bearer token is invalid.' }] });
    if (req.url === '/--/api/v2/push/getReceipts' && req.method === 'POST') {
      const { ids } = JSON.parse(text) as { ids: string[] };
      fake.receiptRequests.push(ids);
      const data: Record<string, unknown> = {};
      for (const id of ids) {
        const token = tickets.get(id);
        if (token === undefined) continue;
        data[id] = fake.deadOnReceipt.has(token)
          ? { status: 'error', message: 'not registered', details: { error: 'DeviceNotRegistered' } }
          : { status: 'ok' };
      }
      return json(res, 200, { data });
    }
    if (req.url !== '/--/api/v2/push/send' || req.method !== 'POST') return json(res, 404, { errors: [{ code: 'NOT_FOUND' }] });
    const messages = JSON.parse(text) as Array<{ to: string }>;
    fake.batches.push(messages.length);
    const forced = fake.requestAnswers.shift();
    if (forced) {
      return json(
        res,
        forced.status,
        { errors: [{ code: forced.status === 401 ? 'UNAUTHORIZED' : 'RATE_LIMIT' }] },
        forced.retryAfter ? { 'retry-after': String(forced.retryAfter) } : {},
      );
    }
    if (messages.length > 100) return json(res, 400, { errors: [{ code: 'PUSH_TOO_MANY_NOTIFICATIONS' }] });
    const data = messages.map((m) => {
      const nth = countOf(fake.perDevice, m.to);
      fake.sent.push({ token: m.to, headers: req.headers, body: m });
      const answer = fake.script(m.to, nth);
      if (answer === 'dead') return { status: 'error', message: 'not registered', details: { error: 'DeviceNotRegistered' } };
      const id = randomBytes(8).toString('hex');
      tickets.set(id, m.to);
      return { status: 'ok', id };
    });
    await hold.wait();
    return json(res, 200, { data });
  });
  const port = await listen(server);
  Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    sent: [],
    perDevice: new Map(),
    script,
    batches: [],
    receiptRequests: [],
    deadOnReceipt: new Set(),
    accessToken: options.accessToken ?? null,
    requestAnswers: [],
    close: closer(server),
  });
  return fake;
}
