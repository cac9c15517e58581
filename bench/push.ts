// npm run bench:push — one station's notification to BENCH_DEVICES (default 100 000) devices through
// the FCM fake, with one worker process, beside a baseline in the same run: a bare loop in this process
// sending the same requests (same bodies, same access token) to the same fake with the same concurrency
// (PUSH_CONCURRENCY, default 64). Then Expo: BENCH_EXPO_DEVICES (default 12 000) at its default pace.
//
// Runs `waveline web` and `waveline worker` as separate processes on a database of its own
// (BENCH_DATABASE_URL, recreated) and a Redis index of its own (BENCH_REDIS_URL, flushed) — or on a Redis
// Cluster (BENCH_REDIS_CLUSTER_URLS, every master flushed; BENCH_REDIS=one|cluster|both, `both` running
// the same measurement on one Redis and then on the cluster and printing cluster ÷ one for each headline
// figure: bench/support/redisBackends.ts, docs/benchmarks.md#push-sending); the fakes
// (bench/push/fake.ts) run in a third process. FCM is measured with the pace raised out of the way
// (BENCH_PACE, default 100 000/s) so the figure is the worker's; Expo at its default 600/s.
// Reported: messages/s and CPU ms per 1 000 messages (the worker's and Postgres' for Waveline, this
// process' for the bare loop), and the Redis commands per 1 000 messages (INFO commandstats, summed over
// the masters on the cluster; on one Redis every client of the server counts). The machine is shared (2
// cores): compare within one run.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import knex from 'knex';
import { Pool } from 'undici';
import { SignJWT } from 'jose';
import { createPrivateKey } from 'node:crypto';
import { migrate } from '../src/roles/migrate.ts';
import { loadConfig } from '../src/config.ts';
import { BENCH_ENV, cpuMs, cpuMsOf, freePort, recreateDatabase, startRole, stopRole, waitUntilReady } from './support.ts';
import { DEFAULT_CLUSTER_URLS, openRedis, redisBackends, runOnEachBackend, type RedisBackend } from './support/redisBackends.ts';

const env = process.env;
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_push';
const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/12';
const CLUSTER_URLS = env.BENCH_REDIS_CLUSTER_URLS ?? DEFAULT_CLUSTER_URLS;
const BACKENDS = redisBackends(env);
const DEVICES = Number(env.BENCH_DEVICES ?? 100_000);
const EXPO_DEVICES = Number(env.BENCH_EXPO_DEVICES ?? 12000);
const CONCURRENCY = Number(env.PUSH_CONCURRENCY ?? 64);
const PACE = env.BENCH_PACE ?? '100000';
const ADMIN = { authorization: `Bearer ${BENCH_ENV.WAVELINE_ADMIN_TOKEN}`, 'content-type': 'application/json' };

async function startFakes(): Promise<{ fcmUrl: string; expoUrl: string; account: Record<string, string>; stop(): void }> {
  const child = spawn(process.execPath, ['bench/push/fake.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((ok) => createInterface({ input: child.stdout! }).once('line', ok));
  return { ...JSON.parse(line), stop: () => child.kill('SIGTERM') };
}

async function api(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}/admin/v1${path}`, {
    method,
    headers: ADMIN,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => null);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function insertDevices(db: knex.Knex, stationId: string, provider: string, tokens: string[]): Promise<void> {
  const now = new Date();
  for (let i = 0; i < tokens.length; i += 5000) {
    await db('push_devices').insert(
      tokens.slice(i, i + 5000).map((token) => ({
        station_id: stationId,
        token_hash: createHash('sha256').update(token).digest('hex'),
        token,
        platform: 'android',
        provider,
        topic_alerts: true,
        topic_content: true,
        created_at: now,
        updated_at: now,
      })),
    );
  }
}

async function waitDone(base: string, stationId: string, id: string): Promise<any> {
  for (;;) {
    const view = await api(base, 'GET', `/stations/${stationId}/push/notifications/${id}`);
    if (!['queued', 'sending'].includes(view.status)) return view;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The bare loop: the same messages:send requests, the same concurrency, no database, no queue. */
async function bareLoop(fcmUrl: string, account: Record<string, string>, tokens: string[]): Promise<{ seconds: number; cpu: number }> {
  const assertion = await new SignJWT({ scope: 'https://www.googleapis.com/auth/firebase.messaging' })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(account.client_email)
    .setAudience(account.token_uri)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(createPrivateKey(account.private_key));
  const tokenRes = await fetch(account.token_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
  });
  const access = ((await tokenRes.json()) as { access_token: string }).access_token;
  const pool = new Pool(new URL(fcmUrl).origin, { connections: 256, pipelining: 1 });
  const path = `/v1/projects/${account.project_id}/messages:send`;
  const message = (token: string) =>
    JSON.stringify({
      message: {
        token,
        notification: { title: 'Bench', body: 'Bare loop' },
        data: { notificationId: '00000000-0000-0000-0000-000000000000', topic: 'alerts' },
        android: { ttl: '86400s', priority: 'HIGH' },
        apns: { headers: { 'apns-expiration': String(Math.floor(Date.now() / 1000) + 86400) } },
      },
    });
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < tokens.length) {
        const token = tokens[next++];
        const res = await pool.request({
          path,
          method: 'POST',
          headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json; charset=utf-8' },
          body: message(token),
        });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`bare loop: ${res.statusCode}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu0);
  await pool.close();
  return { seconds, cpu: (used.user + used.system) / 1000 };
}

/** The whole measurement on one backend (a fresh database, the Redis flushed, roles and fakes of its own). */
async function run(backend: RedisBackend) {
  await recreateDatabase(DATABASE_URL);
  await migrate(loadConfig({ ...env, DATABASE_URL, REDIS_URL, REDIS_CLUSTER_URLS: '' }));
  const redis = await openRedis(backend, REDIS_URL, CLUSTER_URLS);
  await redis.flush();
  const fakes = await startFakes();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const roleEnv = {
    ...BENCH_ENV,
    DATABASE_URL,
    ...redis.roleEnv,
    LOG_LEVEL: 'warn',
    PUSH_FCM_URL: fakes.fcmUrl,
    PUSH_EXPO_URL: fakes.expoUrl,
    PUSH_MAX_PER_SECOND: PACE,
    PUSH_EXPO_MAX_PER_SECOND: '600',
    PUSH_EXPO_RECEIPT_DELAY_SECONDS: '3600',
    PUSH_CONCURRENCY: String(CONCURRENCY),
  };
  const web = startRole('web', { ...roleEnv, PORT: String(port), WORKER_PORT: String(await freePort()) });
  const worker = startRole('worker', { ...roleEnv, WORKER_PORT: String(await freePort()) });
  const db = knex({ client: 'pg', connection: DATABASE_URL });
  try {
    await waitUntilReady(base);
    const fcmStation = await api(base, 'POST', '/stations', {
      slug: `bench-push-${Date.now().toString(36)}`,
      name: 'Bench',
      timezone: 'UTC',
      push: { provider: 'fcm' },
    });
    await api(base, 'PUT', `/stations/${fcmStation.id}/push/credentials`, { provider: 'fcm', serviceAccount: fakes.account });
    const tokens = Array.from({ length: DEVICES }, (_, i) => `bench-fcm-${i.toString(36)}-${'x'.repeat(140)}`);
    await insertDevices(db, fcmStation.id, 'fcm', tokens);
    // Warm-up on a station of its own: the worker's pools, access token and statement plans (not counted).
    const warmStation = await api(base, 'POST', '/stations', {
      slug: `bench-warm-${Date.now().toString(36)}`,
      name: 'Warm',
      timezone: 'UTC',
      push: { provider: 'fcm' },
    });
    await api(base, 'PUT', `/stations/${warmStation.id}/push/credentials`, { provider: 'fcm', serviceAccount: fakes.account });
    await insertDevices(
      db,
      warmStation.id,
      'fcm',
      tokens.slice(0, 2000).map((t) => `warm-${t}`),
    );
    const warm = await api(base, 'POST', `/stations/${warmStation.id}/push/notifications`, { topic: 'alerts', title: 'warm-up' });
    await waitDone(base, warmStation.id, warm.id);

    const cpu0 = cpuMs(worker.pid!);
    const pg0 = cpuMsOf('postgres');
    const commands0 = await redis.commandCalls();
    const started = performance.now();
    const sent = await api(base, 'POST', `/stations/${fcmStation.id}/push/notifications`, {
      topic: 'alerts',
      title: 'Bench',
      body: 'Waveline',
    });
    const view = await waitDone(base, fcmStation.id, sent.id);
    const seconds = (performance.now() - started) / 1000;
    const workerCpu = cpuMs(worker.pid!) - cpu0;
    // Postgres' share (every backend that lived through the run: the worker's pool, the web's reads).
    const postgresCpu = cpuMsOf('postgres') - pg0;
    const redisCommands = (await redis.commandCalls()) - commands0;
    const bare = await bareLoop(fakes.fcmUrl, fakes.account, tokens);

    const expoStation = await api(base, 'POST', '/stations', {
      slug: `bench-expo-${Date.now().toString(36)}`,
      name: 'Bench Expo',
      timezone: 'UTC',
      push: { provider: 'expo' },
    });
    await api(base, 'PUT', `/stations/${expoStation.id}/push/credentials`, { provider: 'expo' });
    await insertDevices(
      db,
      expoStation.id,
      'expo',
      Array.from({ length: EXPO_DEVICES }, (_, i) => `ExponentPushToken[bench-${i}]`),
    );
    const expoStarted = performance.now();
    const expoSent = await api(base, 'POST', `/stations/${expoStation.id}/push/notifications`, { topic: 'alerts', title: 'Bench' });
    const expoView = await waitDone(base, expoStation.id, expoSent.id);
    const expoSeconds = (performance.now() - expoStarted) / 1000;

    const rate = view.counts.sent / seconds;
    const bareRate = DEVICES / bare.seconds;
    return {
      date: new Date().toISOString(),
      redis: redis.label,
      devices: DEVICES,
      concurrency: CONCURRENCY,
      fcm: {
        status: view.status,
        counts: view.counts,
        seconds: +seconds.toFixed(2),
        messagesPerSecond: Math.round(rate),
        sendingSeconds: +((Date.parse(view.finishedAt) - Date.parse(view.startedAt)) / 1000).toFixed(2),
        workerCpuMsPer1000: +((workerCpu / view.counts.sent) * 1000).toFixed(1),
        postgresCpuMsPer1000: +((postgresCpu / view.counts.sent) * 1000).toFixed(1),
        redisCommandsPer1000: +((redisCommands / view.counts.sent) * 1000).toFixed(1),
      },
      bare: {
        seconds: +bare.seconds.toFixed(2),
        messagesPerSecond: Math.round(bareRate),
        cpuMsPer1000: +((bare.cpu / DEVICES) * 1000).toFixed(1),
      },
      ratioToBare: +(rate / bareRate).toFixed(2),
      expo: {
        devices: EXPO_DEVICES,
        status: expoView.status,
        sent: expoView.counts.sent,
        seconds: +expoSeconds.toFixed(2),
        messagesPerSecond: Math.round(expoView.counts.sent / expoSeconds),
        sendingMessagesPerSecond: Math.round(
          expoView.counts.sent / ((Date.parse(expoView.finishedAt) - Date.parse(expoView.startedAt)) / 1000),
        ),
        pace: 600,
      },
      targets: { fcmMessagesPerSecond: 5000, ratioToBare: 0.7 },
    };
  } finally {
    await db.destroy();
    await stopRole(worker);
    await stopRole(web);
    fakes.stop();
    redis.close();
  }
}

/** The figures compared across backends (BENCH_REDIS=both). */
const headline = (r: Awaited<ReturnType<typeof run>>) => ({
  fcmMessagesPerSecond: r.fcm.messagesPerSecond,
  workerCpuMsPer1000: r.fcm.workerCpuMsPer1000,
  postgresCpuMsPer1000: r.fcm.postgresCpuMsPer1000,
  bareMessagesPerSecond: r.bare.messagesPerSecond,
  ratioToBare: r.ratioToBare,
  expoMessagesPerSecond: r.expo.messagesPerSecond,
});

// With both, the bare loop's ratio shows how much the machine moved between the two runs.
const output = await runOnEachBackend('push', BACKENDS, run, headline);
process.stdout.write(JSON.stringify(output, null, 2) + '\n');
