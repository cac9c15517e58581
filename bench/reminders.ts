// npm run bench:reminders — one program with BENCH_FOLLOWERS (default 100 000) following devices on the
// FCM fake, and a broadcast of it starting BENCH_LEAD_SECONDS (default 20) after the set-up: the time
// from the reminder's due instant (its start: remindBeforeMinutes 0) to the first and the last message
// the fake receives, against the pace bound (followers ÷ PUSH_MAX_PER_SECOND, default 5000/s). Target
// (docs/benchmarks.md#reminders): last ≤ 1.1 × bound + 2 s.
//
// Runs `waveline web` and `waveline worker` as separate processes on a database of its own
// (BENCH_DATABASE_URL, recreated) and a Redis index of its own (BENCH_REDIS_URL, flushed) — or on a Redis
// Cluster (BENCH_REDIS_CLUSTER_URLS, every master flushed; BENCH_REDIS=one|cluster|both, `both` running
// the same measurement on one Redis and then on the cluster and printing cluster ÷ one for each headline
// figure: bench/support/redisBackends.ts, docs/benchmarks.md#reminders); nothing fires the reminder but
// the worker's own tick and fire jobs. The FCM fake runs in this process and only
// counts (first and last arrival, wall clock).
import { createHash } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import knex from 'knex';
import { migrate } from '../src/roles/migrate.ts';
import { loadConfig } from '../src/config.ts';
import { startFakeFcm } from '../test/support/fakePush.ts';
import { BENCH_ENV, cpuMs, freePort, recreateDatabase, startRole, stopRole, waitUntilReady } from './support.ts';
import { DEFAULT_CLUSTER_URLS, openRedis, redisBackends, runOnEachBackend, type RedisBackend } from './support/redisBackends.ts';

const env = process.env;
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_reminders';
const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';
const CLUSTER_URLS = env.BENCH_REDIS_CLUSTER_URLS ?? DEFAULT_CLUSTER_URLS;
const BACKENDS = redisBackends(env);
const FOLLOWERS = Number(env.BENCH_FOLLOWERS ?? 100_000);
const PACE = Number(env.PUSH_MAX_PER_SECOND ?? 5000);
const LEAD_SECONDS = Number(env.BENCH_LEAD_SECONDS ?? 20);
const ADMIN = { authorization: `Bearer ${BENCH_ENV.WAVELINE_ADMIN_TOKEN}`, 'content-type': 'application/json' };

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

/** Devices following `programId`, written straight to the tables (the listener route is tested elsewhere). */
async function insertFollowers(db: knex.Knex, stationId: string, programId: string, tokens: string[]): Promise<void> {
  const now = new Date();
  for (let i = 0; i < tokens.length; i += 5000) {
    const slice = tokens.slice(i, i + 5000).map((token) => ({ token, hash: createHash('sha256').update(token).digest('hex') }));
    await db('push_devices').insert(
      slice.map(({ token, hash }) => ({
        station_id: stationId,
        token_hash: hash,
        token,
        platform: 'android',
        provider: 'fcm',
        created_at: now,
        updated_at: now,
      })),
    );
    await db('push_follows').insert(
      slice.map(({ hash }) => ({ station_id: stationId, token_hash: hash, position: 0, program_id: programId, remind_before_minutes: 0 })),
    );
  }
}

async function station(base: string, db: knex.Knex, account: unknown, label: string, followers: number, leadMs: number) {
  const created = await api(base, 'POST', '/stations', {
    slug: `bench-${label}-${Date.now().toString(36)}`,
    name: 'Bench',
    timezone: 'UTC',
    push: { provider: 'fcm' },
  });
  await api(base, 'PUT', `/stations/${created.id}/push/credentials`, { provider: 'fcm', serviceAccount: account });
  const programId = randomUUID();
  await api(base, 'PUT', `/stations/${created.id}/programs/${programId}`, { title: `Bench ${label}`, presenterIds: [], slots: [] });
  await insertFollowers(
    db,
    created.id,
    programId,
    Array.from({ length: followers }, (_, i) => `bench-${label}-${i.toString(36)}-${'x'.repeat(140)}`),
  );
  // The broadcast is created once the followers are in: its start is `leadMs` from now.
  const startsAt = new Date(Math.ceil((Date.now() + leadMs) / 1000) * 1000);
  const broadcastId = randomUUID();
  await api(base, 'PUT', `/stations/${created.id}/broadcasts/${broadcastId}`, {
    programId,
    startsAt: startsAt.toISOString(),
    endsAt: new Date(startsAt.getTime() + 3600_000).toISOString(),
    nature: 'live',
  });
  return { stationId: created.id as string, broadcastId, dueAt: startsAt };
}

async function reminderDone(base: string, db: knex.Knex, stationId: string, broadcastId: string): Promise<any> {
  for (;;) {
    const row = await db('push_notifications').where({ broadcast_id: broadcastId }).first('id');
    if (row) {
      const view = await api(base, 'GET', `/stations/${stationId}/push/notifications/${row.id}`);
      if (!['queued', 'sending'].includes(view.status)) return view;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The whole measurement on one backend (a fresh database, the Redis flushed, roles and fake of its own). */
async function run(backend: RedisBackend) {
  await recreateDatabase(DATABASE_URL);
  await migrate(loadConfig({ ...env, DATABASE_URL, REDIS_URL, REDIS_CLUSTER_URLS: '' }));
  const redis = await openRedis(backend, REDIS_URL, CLUSTER_URLS);
  await redis.flush();
  const fcm = await startFakeFcm();
  let arrivals = 0;
  let first = 0;
  let last = 0;
  // Counts only (memory stays flat over 100 000 messages).
  fcm.sent.push = () => {
    const now = Date.now();
    if (arrivals++ === 0) first = now;
    last = now;
    return arrivals;
  };
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const roleEnv = {
    ...BENCH_ENV,
    DATABASE_URL,
    ...redis.roleEnv,
    LOG_LEVEL: 'warn',
    PUSH_FCM_URL: fcm.url,
    PUSH_MAX_PER_SECOND: String(PACE),
  };
  const web = startRole('web', { ...roleEnv, PORT: String(port), WORKER_PORT: String(await freePort()) });
  const worker = startRole('worker', { ...roleEnv, WORKER_PORT: String(await freePort()) });
  const db = knex({ client: 'pg', connection: DATABASE_URL });
  try {
    // Slow on a loaded machine: the web role loads every route and checks the database first.
    await waitUntilReady(base, 180_000);
    // Warm-up on a station of its own (the worker's pools, access token, statement plans): not counted.
    const warm = await station(base, db, fcm.account, 'warm', 2000, 8000);
    await reminderDone(base, db, warm.stationId, warm.broadcastId);
    const bench = await station(base, db, fcm.account, 'main', FOLLOWERS, LEAD_SECONDS * 1000);
    const dueAt = bench.dueAt;
    if (Date.now() >= dueAt.getTime()) throw new Error('the broadcast was created after its start: raise BENCH_LEAD_SECONDS');
    arrivals = 0;
    const cpu0 = cpuMs(worker.pid!);
    const commands0 = await redis.commandCalls();
    const view = await reminderDone(base, db, bench.stationId, bench.broadcastId);
    const workerCpu = cpuMs(worker.pid!) - cpu0;
    // From before the due instant to `done` (on one Redis every client of the server counts).
    const redisCommands = (await redis.commandCalls()) - commands0;
    const bound = FOLLOWERS / PACE;
    const lastSeconds = (last - dueAt.getTime()) / 1000;
    return {
      date: new Date().toISOString(),
      redis: redis.label,
      followers: FOLLOWERS,
      pace: PACE,
      status: view.status,
      counts: view.counts,
      arrivals,
      createdAfterDueSeconds: +((Date.parse(view.createdAt) - dueAt.getTime()) / 1000).toFixed(2),
      firstAfterDueSeconds: +((first - dueAt.getTime()) / 1000).toFixed(2),
      lastAfterDueSeconds: +lastSeconds.toFixed(2),
      paceBoundSeconds: +bound.toFixed(2),
      limitSeconds: +(1.1 * bound + 2).toFixed(2),
      withinLimit: lastSeconds <= 1.1 * bound + 2,
      workerCpuMsPer1000: +((workerCpu / Math.max(1, view.counts.sent)) * 1000).toFixed(1),
      redisCommandsPer1000: +((redisCommands / Math.max(1, view.counts.sent)) * 1000).toFixed(1),
    };
  } finally {
    await db.destroy();
    await stopRole(worker);
    await stopRole(web);
    await fcm.close();
    redis.close();
  }
}

/** The figures compared across backends (BENCH_REDIS=both). */
const headline = (r: Awaited<ReturnType<typeof run>>) => ({
  createdAfterDueSeconds: r.createdAfterDueSeconds,
  firstAfterDueSeconds: r.firstAfterDueSeconds,
  lastAfterDueSeconds: r.lastAfterDueSeconds,
  workerCpuMsPer1000: r.workerCpuMsPer1000,
});

const output = await runOnEachBackend('reminders', BACKENDS, run, headline);
process.stdout.write(JSON.stringify(output, null, 2) + '\n');
