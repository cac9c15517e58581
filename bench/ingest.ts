// npm run bench:ingest — now-playing ingest under load, with the worker running.
//
// Starts `waveline web` and `waveline worker` as separate processes on a database of its own
// (BENCH_DATABASE_URL, recreated) and a Redis index of its own (BENCH_REDIS_URL, flushed), creates
// BENCH_STATIONS stations each with a live broadcast and a 30-item rundown, then measures:
//   1. open loop at BENCH_RATE req/s (default 200) spread over the stations: ingest latency p50/p99
//      and the delay from each ingest response to its `now-playing` feed row arriving on Redis;
//   2. closed loop with BENCH_CONCURRENCY requests in flight: sustained observations/s;
//   3. the same closed loop against a baseline in the same run (bench/support/ingestBaseline.ts: a
//      bare node:http server doing one INSERT and one PUBLISH per request), and the ratios; then the
//      baseline at the paced rate for 10 s, whose p99 is the machine's own latency tail;
//   4. the embedded default in the same run: `waveline dev` with DATABASE_URL and REDIS_URL unset
//      (PGlite in a temporary directory, in-process queue and bus), the same open and closed loops, as
//      ratios of the service-mode figures (its feed rows stay in the process: no publish delay).
//   5. the cost of observability: BENCH_OBSERVABILITY_ROUNDS (default 3) alternating rounds of the closed
//      loop against a fresh web + worker pair with metrics and request logs on (LOG_LEVEL=info, stdout to
//      /dev/null) and one with METRICS=0 REQUEST_LOG=0; medians of obs/s and CPU per observation. The
//      web + worker CPU is the figure to read: the Postgres figure sums every `postgres` process of the
//      machine, so other databases' work (and backends that exit mid-run) show up in it.
// Phases 1–3 run with observability on (the defaults; request lines at info).
// CPU per observation is reported per process (web, worker, all of Postgres, Redis), from /proc: it is
// steadier than throughput when the machine is noisy.
// Rate limits are off (RATE_LIMIT_*=0), as benchmarks run (docs/benchmarks.md).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { createDb } from '../src/lib/db.ts';
import { keys } from '../src/lib/keys.ts';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/roles/migrate.ts';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../src/lib/embedded/postgres.ts';
import { BENCH_ENV, cpuMs, cpuMsOf, freePort, recreateDatabase, startRole, stopRole, summary, waitUntilReady } from './support.ts';

const env = process.env;
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_ingest';
const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';
const STATIONS = Number(env.BENCH_STATIONS ?? 50);
const RATE = Number(env.BENCH_RATE ?? 200);
const RATE_SECONDS = Number(env.BENCH_DURATION_SECONDS ?? 30);
const CONCURRENCY = Number(env.BENCH_CONCURRENCY ?? 32);
const MAX_SECONDS = Number(env.BENCH_MAX_SECONDS ?? 15);
const BASELINE_PACED_SECONDS = 10;
const OBSERVABILITY_ROUNDS = Number(env.BENCH_OBSERVABILITY_ROUNDS ?? 3);
const ADMIN_TOKEN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const TARGETS = { observationsPerSecond: 500, ingestP99Ms: 25, publishDelayP99Ms: 10 };

interface BenchStation {
  id: string;
  slug: string;
  token: string;
  rundown: Array<{ artist: string; title: string }>;
  lastObservedAt: number;
}

const roleEnv = (port: number): Record<string, string> => ({
  ...BENCH_ENV,
  DATABASE_URL,
  REDIS_URL,
  PORT: String(port),
  WORKER_PORT: '0',
  LOG_LEVEL: 'info',
});

async function adminPost(baseUrl: string, path: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${baseUrl}/admin/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

/** Stations through the admin API; their live broadcast and rundown straight into the tables. */
async function setUp(baseUrl: string, databaseUrl = DATABASE_URL): Promise<BenchStation[]> {
  const db = createDb(databaseUrl, { max: 4 });
  const now = Date.now();
  const stations: BenchStation[] = [];
  for (let s = 0; s < STATIONS; s++) {
    const station = await adminPost(baseUrl, '/stations', {
      slug: `bench-${s}-${randomUUID().slice(0, 6)}`,
      name: `Bench ${s}`,
      timezone: 'Europe/Berlin',
    });
    const { token } = await adminPost(baseUrl, `/stations/${station.id}/credentials`, { scopes: ['ingest:write'] });
    const programId = randomUUID();
    const broadcastId = randomUUID();
    await db('programs').insert({ id: programId, station_id: station.id, title: 'Bench Show' });
    const startsAt = now - 3600_000;
    await db('broadcasts').insert({
      id: broadcastId,
      station_id: station.id,
      program_id: programId,
      starts_at: new Date(startsAt),
      ends_at: new Date(now + 7200_000),
      nature: 'live',
    });
    const rundown = Array.from({ length: 30 }, (_, i) => ({ artist: `Artist ${s}-${i}`, title: `Planned Song Number ${i}` }));
    await db('rundown_items').insert(
      rundown.map((item, i) => ({
        id: randomUUID(),
        broadcast_id: broadcastId,
        station_id: station.id,
        position: i,
        kind: 'track',
        artist: item.artist,
        title: item.title,
        duration_seconds: 360,
        planned_starts_at: new Date(startsAt + i * 360_000),
        planned_ends_at: new Date(startsAt + (i + 1) * 360_000),
      })),
    );
    stations.push({ id: station.id, slug: station.slug, token, rundown, lastObservedAt: 0 });
  }
  await db.destroy();
  return stations;
}

/** Mostly planned tracks (matched), some covers (uncertain) and some unplanned ones (ignored). */
function observation(station: BenchStation): { body: string; key: string } {
  const observedAt = Math.max(Date.now(), station.lastObservedAt + 1);
  station.lastObservedAt = observedAt;
  const item = station.rundown[Math.floor(Math.random() * station.rundown.length)];
  const roll = Math.random();
  const track =
    roll < 0.8
      ? item
      : roll < 0.9
        ? { artist: 'Tribute Band', title: item.title }
        : { artist: 'Unplanned', title: `Surprise ${randomUUID()}` };
  const body = JSON.stringify({ eventId: randomUUID(), observedAt, ...track, durationSeconds: 240 });
  return { body, key: `${station.id}|${new Date(observedAt).toISOString()}` };
}

/** CPU (ms) used so far by the processes that serve an observation. */
function cpuSnapshot(pids: Record<string, number>): Record<string, number> {
  const snap: Record<string, number> = { postgres: cpuMsOf('postgres'), redis: cpuMsOf('redis-server') };
  for (const [name, pid] of Object.entries(pids)) snap[name] = cpuMs(pid);
  return snap;
}

/** CPU milliseconds per observation, by process, between two snapshots. */
function cpuPer(before: Record<string, number>, after: Record<string, number>, count: number): Record<string, number> {
  const per: Record<string, number> = {};
  let total = 0;
  for (const name of Object.keys(before)) {
    per[name] = Math.round(((after[name] - before[name]) / Math.max(1, count)) * 1000) / 1000;
    total += per[name];
  }
  per.total = Math.round(total * 1000) / 1000;
  return per;
}

interface Sample {
  latencyMs: number;
  sentAt: number;
  respondedAt: number;
  key: string;
  outcome: string;
}

async function send(pool: Pool, station: BenchStation): Promise<Sample | null> {
  const { body, key } = observation(station);
  const started = performance.now();
  const res = await pool.request({
    method: 'POST',
    path: `/api/v1/integrations/playback?stationSlug=${station.slug}`,
    headers: { authorization: `Bearer ${station.token}`, 'content-type': 'application/json' },
    body,
  });
  const text = await res.body.text();
  const respondedAt = performance.now();
  if (res.statusCode !== 200) {
    process.stderr.write(`bench: ${res.statusCode} ${text}\n`);
    return null;
  }
  return {
    latencyMs: respondedAt - started,
    sentAt: started,
    respondedAt,
    key,
    outcome: (JSON.parse(text) as { outcome: string }).outcome,
  };
}

/** Open loop: one request every 1000/rate ms on schedule, whatever the answers take. */
async function openLoop(pool: Pool, stations: BenchStation[], rate: number, seconds: number): Promise<Sample[]> {
  const total = rate * seconds;
  const start = performance.now();
  const pending: Array<Promise<Sample | null>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(send(pool, stations[i % stations.length]));
  }
  return (await Promise.all(pending)).filter((s): s is Sample => s !== null);
}

/** Closed loop: `concurrency` requests always in flight. */
async function closedLoop(
  pool: Pool,
  stations: BenchStation[],
  concurrency: number,
  seconds: number,
): Promise<{ samples: Sample[]; elapsedS: number }> {
  const samples: Sample[] = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const sample = await send(pool, stations[next++ % stations.length]);
        if (sample) samples.push(sample);
      }
    }),
  );
  return { samples, elapsedS: (performance.now() - start) / 1000 };
}

/** Phase 4: the embedded default, set up like the service run, then paced and closed loops. */
async function embeddedRun(): Promise<{
  openLoop: Record<string, unknown>;
  closedLoop: { observationsPerSecond: number; cpuMsPerObservation: number; latencyMs: ReturnType<typeof summary> };
}> {
  const dataDir = mkdtempSync(join(tmpdir(), 'waveline-bench-embedded-'));
  try {
    // Set-up: this process serves the data directory's PGlite for a moment, so that the broadcasts and
    // rundowns can be inserted as in the service run; then the embedded `waveline dev` opens it itself.
    const postgres = await startEmbeddedPostgres(dataDir);
    const setupPort = await freePort();
    const gatewayPort = String(await freePort());
    const embeddedEnv = (port: number, databaseUrl: string) => ({
      ...roleEnv(port),
      DATABASE_URL: databaseUrl,
      REDIS_URL: '',
      WAVELINE_DATA_DIR: dataDir,
      WAVELINE_DEMO: '0',
      GATEWAY_PORT: gatewayPort,
    });
    const setupRole = startRole('dev', embeddedEnv(setupPort, postgres.url));
    let stations: BenchStation[];
    try {
      await waitUntilReady(`http://127.0.0.1:${setupPort}`);
      stations = await setUp(`http://127.0.0.1:${setupPort}`, postgres.url);
    } finally {
      await stopRole(setupRole);
      await postgres.close();
    }
    const port = await freePort();
    const dev = startRole('dev', embeddedEnv(port, ''));
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: Math.max(CONCURRENCY, 64), pipelining: 1 });
    try {
      await waitUntilReady(`http://127.0.0.1:${port}`);
      process.stderr.write(`bench: embedded (waveline dev, PGlite + in-process adapters): warming up\n`);
      await openLoop(pool, stations, RATE, 5);
      process.stderr.write(`bench: embedded open loop ${RATE} req/s for ${RATE_SECONDS} s\n`);
      const paced = await openLoop(pool, stations, RATE, RATE_SECONDS);
      process.stderr.write(`bench: embedded closed loop, ${CONCURRENCY} in flight for ${MAX_SECONDS} s\n`);
      const before = cpuMs(dev.pid as number);
      const max = await closedLoop(pool, stations, CONCURRENCY, MAX_SECONDS);
      const cpu = (cpuMs(dev.pid as number) - before) / Math.max(1, max.samples.length);
      return {
        openLoop: {
          rate: RATE,
          seconds: RATE_SECONDS,
          sent: RATE * RATE_SECONDS,
          answered: paced.length,
          ingestLatencyMs: summary(paced.map((x) => x.latencyMs)),
        },
        closedLoop: {
          observationsPerSecond: Math.round(max.samples.length / max.elapsedS),
          cpuMsPerObservation: Math.round(cpu * 1000) / 1000,
          latencyMs: summary(max.samples.map((x) => x.latencyMs)),
        },
      };
    } finally {
      await pool.close();
      await stopRole(dev);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  loadConfig({ DATABASE_URL, REDIS_URL }); // fail early on a malformed URL
  await recreateDatabase(DATABASE_URL);
  await migrate(loadConfig({ DATABASE_URL, REDIS_URL }));
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();

  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  let web = startRole('web', roleEnv(port));
  let worker = startRole('worker', roleEnv(0));
  const pool = new Pool(baseUrl, { connections: Math.max(CONCURRENCY, 64), pipelining: 1 });
  try {
    await waitUntilReady(baseUrl);
    const stations = await setUp(baseUrl);

    const published = new Map<string, number>();
    redis.on('pmessage', (_pattern: string, _channel: string, raw: string) => {
      const arrived = performance.now();
      const message = JSON.parse(raw) as { stationId: string; kind: string; data: { track: { observedAt: string | null } | null } };
      if (message.kind === 'now-playing' && message.data.track?.observedAt)
        published.set(`${message.stationId}|${message.data.track.observedAt}`, arrived);
    });
    await redis.psubscribe(keys.feedChannelPattern);

    process.stderr.write(`bench: ${STATIONS} stations ready; warming up\n`);
    // Warm-up at the measured rate: connection pools, JIT and caches reach the state the phase measures.
    await openLoop(pool, stations, RATE, 5);

    process.stderr.write(`bench: open loop ${RATE} req/s for ${RATE_SECONDS} s\n`);
    const pacedCpuBefore = cpuSnapshot({ web: web.pid as number, worker: worker.pid as number });
    const loadBefore = cpuMs(process.pid);
    const paced = await openLoop(pool, stations, RATE, RATE_SECONDS);
    const pacedCpu = cpuPer(pacedCpuBefore, cpuSnapshot({ web: web.pid as number, worker: worker.pid as number }), paced.length);
    // The load generator shares the machine: its own CPU, reported apart from the service's.
    const loadGeneratorCpu = Math.round(((cpuMs(process.pid) - loadBefore) / Math.max(1, paced.length)) * 1000) / 1000;
    await new Promise((r) => setTimeout(r, 500)); // let the last feed rows arrive
    const delays: number[] = [];
    const sinceSent: number[] = [];
    let missing = 0;
    for (const sample of paced) {
      const arrived = published.get(sample.key);
      if (arrived === undefined) {
        missing++;
        continue;
      }
      // Rows are published after commit, before rundown following is awaited: usually before the response.
      delays.push(Math.max(0, arrived - sample.respondedAt));
      sinceSent.push(arrived - sample.sentAt);
    }

    process.stderr.write(`bench: closed loop, ${CONCURRENCY} in flight for ${MAX_SECONDS} s\n`);
    const roles = { web: web.pid as number, worker: worker.pid as number };
    const maxCpuBefore = cpuSnapshot(roles);
    const max = await closedLoop(pool, stations, CONCURRENCY, MAX_SECONDS);
    const maxCpu = cpuPer(maxCpuBefore, cpuSnapshot(roles), max.samples.length);

    process.stderr.write(`bench: baseline (one INSERT + one PUBLISH per request), ${CONCURRENCY} in flight for ${MAX_SECONDS} s\n`);
    const basePort = await freePort();
    const baseline = fork(new URL('./support/ingestBaseline.ts', import.meta.url).pathname, [String(basePort), DATABASE_URL, REDIS_URL], {
      stdio: 'inherit',
    });
    await new Promise<void>((ok) => baseline.once('message', () => ok()));
    const basePool = new Pool(`http://127.0.0.1:${basePort}`, { connections: Math.max(CONCURRENCY, 64), pipelining: 1 });
    let base: { samples: Sample[]; elapsedS: number };
    let baseCpu: Record<string, number>;
    let basePaced: Sample[];
    try {
      await closedLoop(basePool, stations, CONCURRENCY, 3); // warm-up
      const before = cpuSnapshot({ baseline: baseline.pid as number });
      base = await closedLoop(basePool, stations, CONCURRENCY, MAX_SECONDS);
      baseCpu = cpuPer(before, cpuSnapshot({ baseline: baseline.pid as number }), base.samples.length);
      // The machine's own latency tail at the paced rate, for reading Waveline's p99 against.
      basePaced = await openLoop(basePool, stations, RATE, BASELINE_PACED_SECONDS);
    } finally {
      await basePool.close();
      await stopRole(baseline);
    }
    const baselinePerSecond = Math.round(base.samples.length / base.elapsedS);
    const embedded = await embeddedRun();

    const outcomes: Record<string, number> = {};
    for (const s of [...paced, ...max.samples]) outcomes[s.outcome] = (outcomes[s.outcome] ?? 0) + 1;
    const ingest = summary(paced.map((s) => s.latencyMs));
    const publish = summary(delays);
    const observationsPerSecond = Math.round(max.samples.length / max.elapsedS);
    const report = {
      stations: STATIONS,
      openLoop: {
        rate: RATE,
        seconds: RATE_SECONDS,
        sent: RATE * RATE_SECONDS,
        answered: paced.length,
        cpuMsPerObservation: pacedCpu,
        loadGeneratorCpuMsPerObservation: loadGeneratorCpu,
        ingestLatencyMs: ingest,
        publishDelayAfterResponseMs: publish,
        feedRowAfterRequestSentMs: summary(sinceSent),
        feedRowsNotSeen: missing,
      },
      closedLoop: {
        concurrency: CONCURRENCY,
        seconds: Math.round(max.elapsedS * 10) / 10,
        observations: max.samples.length,
        observationsPerSecond,
        cpuMsPerObservation: maxCpu,
        latencyMs: summary(max.samples.map((s) => s.latencyMs)),
      },
      baseline: {
        what: 'bare node:http, one INSERT + one PUBLISH per request, same load generator and concurrency',
        requestsPerSecond: baselinePerSecond,
        cpuMsPerRequest: baseCpu,
        latencyMs: summary(base.samples.map((s) => s.latencyMs)),
        pacedLatencyMs: { rate: RATE, seconds: BASELINE_PACED_SECONDS, ...summary(basePaced.map((s) => s.latencyMs)) },
      },
      ratios: {
        throughput: `${((observationsPerSecond / baselinePerSecond) * 100).toFixed(1)}% of the baseline's requests/s`,
        cpu: `${((baseCpu.total / maxCpu.total) * 100).toFixed(1)}% (baseline CPU per request ÷ Waveline CPU per observation, all processes)`,
      },
      embedded: {
        what: 'waveline dev with DATABASE_URL and REDIS_URL unset (PGlite, in-process adapters), one process; CPU is that process (PGlite included)',
        ...embedded,
        ratios: {
          throughput: `${((embedded.closedLoop.observationsPerSecond / observationsPerSecond) * 100).toFixed(1)}% of the service mode's observations/s`,
          ingestP99: `${((embedded.openLoop.ingestLatencyMs as { p99: number }).p99 / ingest.p99).toFixed(2)}× the service mode's paced p99`,
          cpu: `${((embedded.closedLoop.cpuMsPerObservation / maxCpu.total) * 100).toFixed(1)}% of the service mode's CPU per observation (all processes)`,
        },
      },
      outcomes,
      targets: {
        observationsPerSecond: `${observationsPerSecond} (target ≥ ${TARGETS.observationsPerSecond}) ${observationsPerSecond >= TARGETS.observationsPerSecond ? 'PASS' : 'FAIL'}`,
        ingestP99Ms: `${ingest.p99} (target ≤ ${TARGETS.ingestP99Ms}) ${ingest.p99 <= TARGETS.ingestP99Ms ? 'PASS' : 'FAIL'}`,
        publishDelayP99Ms: `${publish.p99} (target ≤ ${TARGETS.publishDelayP99Ms}) ${publish.p99 <= TARGETS.publishDelayP99Ms ? 'PASS' : 'FAIL'}`,
      },
    };
    if (OBSERVABILITY_ROUNDS > 0) {
      await Promise.all([stopRole(web), stopRole(worker)]);
      const runs: Record<'on' | 'off', Array<{ perSecond: number; cpu: number; webWorkerCpu: number }>> = { on: [], off: [] };
      for (let round = 0; round < OBSERVABILITY_ROUNDS; round++) {
        for (const mode of ['on', 'off'] as const) {
          process.stderr.write(`bench: observability ${mode}, round ${round + 1}: closed loop for ${MAX_SECONDS} s\n`);
          const extra: Record<string, string> = mode === 'off' ? { METRICS: '0', REQUEST_LOG: '0' } : {};
          web = startRole('web', { ...roleEnv(port), ...extra });
          worker = startRole('worker', { ...roleEnv(0), ...extra });
          await waitUntilReady(baseUrl);
          await closedLoop(pool, stations, CONCURRENCY, 3); // warm-up
          const pids = { web: web.pid as number, worker: worker.pid as number };
          const before = cpuSnapshot(pids);
          const run = await closedLoop(pool, stations, CONCURRENCY, MAX_SECONDS);
          const cpu = cpuPer(before, cpuSnapshot(pids), run.samples.length);
          runs[mode].push({
            perSecond: Math.round(run.samples.length / run.elapsedS),
            cpu: cpu.total,
            webWorkerCpu: Math.round((cpu.web + cpu.worker) * 1000) / 1000,
          });
          await Promise.all([stopRole(web), stopRole(worker)]);
        }
      }
      const median = (values: number[]) => {
        const sorted = [...values].sort((a, b) => a - b);
        const mid = Math.floor(sorted.length / 2);
        return sorted.length % 2 ? sorted[mid] : Math.round(((sorted[mid - 1] + sorted[mid]) / 2) * 1000) / 1000;
      };
      const pick = (list: typeof runs.on) => ({
        perSecond: median(list.map((r) => r.perSecond)),
        cpu: median(list.map((r) => r.cpu)),
        own: median(list.map((r) => r.webWorkerCpu)),
      });
      const on = pick(runs.on);
      const off = pick(runs.off);
      Object.assign(report, {
        observability: {
          what: `closed loop, ${CONCURRENCY} in flight, ${MAX_SECONDS} s per run, ${OBSERVABILITY_ROUNDS} alternating rounds, medians; on = metrics + request logs (info), off = METRICS=0 REQUEST_LOG=0`,
          runs,
          on: { observationsPerSecond: on.perSecond, cpuMsPerObservation: on.cpu, webWorkerCpuMsPerObservation: on.own },
          off: { observationsPerSecond: off.perSecond, cpuMsPerObservation: off.cpu, webWorkerCpuMsPerObservation: off.own },
          throughputCost: `${(((off.perSecond - on.perSecond) / off.perSecond) * 100).toFixed(1)}%`,
          cpuCost: `${(((on.cpu - off.cpu) / off.cpu) * 100).toFixed(1)}% (web + worker + all Postgres + Redis per observation)`,
          webWorkerCpuCost: `${(((on.own - off.own) / off.own) * 100).toFixed(1)}% (web + worker processes only)`,
        },
      });
    }
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await pool.close();
    redis.disconnect();
    await Promise.all([stopRole(web), stopRole(worker)]);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
