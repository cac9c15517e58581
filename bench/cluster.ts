// `npm run bench:cluster`: Waveline on a Redis Cluster beside one Redis, in the same run, and listener
// reads with a Postgres replica beside none.
//
// For each Redis (BENCH_BACKENDS, default `one,cluster`): a fresh database, BENCH_WEBS (2) `waveline web`,
// BENCH_GATEWAYS (2) `waveline gateway` and one `waveline worker`, as separate processes, on one Redis
// (BENCH_REDIS_URL, an index of its own, flushed) or on the cluster (BENCH_REDIS_CLUSTER_URLS, every master
// flushed; `scripts/redis-cluster.sh start` brings up the local one). BENCH_STATIONS (300) stations are
// made through the admin API; BENCH_CLIENTS (5 000) WebSocket listeners spread over them, the first half of
// the stations on gateway 1 and the second half on gateway 2. Then an open loop of ingests, BENCH_RATE
// (100) a second for BENCH_SECONDS (20), over every station and both web processes, each a new track whose
// title carries the moment it was sent. Reported per Redis:
//   - fan-out: ingest sent → frame received at each listener, p50/p99 (every listener, every frame);
//   - delivered frames against those expected (every listener of the station, once per ingest);
//   - ingest answer p50/p99;
//   - each gateway's feed subscriptions on Redis (CLIENT LIST: `sub`, or `ssub` on the cluster) against
//     the stations its listeners hold, and the feed messages it heard of stations it does not hold
//     (its /metrics, when the gateway counts them);
//   - on the cluster, each master's share of SPUBLISH (INFO commandstats, before and after);
//   - CPU per delivered frame of the gateways, and per ingest of the web processes.
//   - the loss of a gateway: gateway 1 is killed; its listeners reconnect to gateway 2 with their
//     cursors, while ingests go on; the time until every one of them has `synced`, and whether any
//     change of the meantime is missing (each resumed listener's next frames).
// Then the floor of the same Redis (BENCH_FLOOR, default on; `0` leaves it out), with the Waveline processes
// stopped: the same listeners, stations and gateway split on BENCH_GATEWAYS bare relays
// (bench/cluster/relay.ts: uWebSockets.js, a station's channel (S)SUBSCRIBEd for its first listener, each
// message handed as it is to the station's sockets), the same open loop of ingests on BENCH_WEBS bare
// ingest servers (bench/support/ingestBaseline.ts `feed`: one INSERT and one SPUBLISH on the cluster /
// PUBLISH on one Redis per POST, the frame padded to the mean size of Waveline's frames in the same run).
// Then, on the same relays and listeners, the `feed-job` floor (bench/support/ingestBaseline.ts `feed-job`
// and one bench/support/bareJobWorker.ts process): the same, and per POST the Redis work of Waveline's
// rundown following — one BullMQ job added to the `ingest` queue as Waveline's web adds it and awaited on
// the job-results channel, a bare worker completing it with a small result (docs/benchmarks.md, "Redis
// Cluster and read replicas"). BENCH_FLOORS (`feed,feed-job`) picks the floors and their order.
// Each floor reports the same fan-out and ingest percentiles, and the Redis commands per ingest (INFO
// commandstats, summed over the masters, as Waveline's); the bench prints each floor's cluster ÷ one Redis
// beside Waveline's, and per Redis the two floors and Waveline side by side.
// Targets (docs/operations.md, "Capacity"): cluster fan-out p99 ≤ 1.2× one Redis; 0 frames of stations
// a gateway does not hold; each master's share of SPUBLISH within ±35 % of a third; cluster ingest p99
// ≤ 1.2× one Redis.
//
// Replica reads (BENCH_REPLICA, default on when BENCH_DATABASE_REPLICA_URLS is set or
// scripts/pg-replica.sh can start one): one web on the replica's primary, with and without
// DATABASE_REPLICA_URLS, cached now-playing reads (autocannon, 50 connections) in BENCH_ROUNDS (3)
// alternating rounds; target ≥ 0.95× the throughput without a replica.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import autocannon from 'autocannon';
import { BENCH_ENV, cpuMs, cpuMsOf, freePort, median, recreateDatabase, startRole, stopRole, summary, waitUntilReady } from './support.ts';
import { startChild } from './fanout/proc.ts';

const env = process.env;
const BACKENDS = (env.BENCH_BACKENDS ?? 'one,cluster').split(',').filter((b) => b !== '');
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_cluster';
const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/3';
const CLUSTER_URLS = env.BENCH_REDIS_CLUSTER_URLS ?? 'redis://127.0.0.1:7101,redis://127.0.0.1:7102,redis://127.0.0.1:7103';
const STATIONS = Number(env.BENCH_STATIONS ?? 300);
const CLIENTS = Number(env.BENCH_CLIENTS ?? 5000);
const WEBS = Number(env.BENCH_WEBS ?? 2);
const GATEWAYS = Number(env.BENCH_GATEWAYS ?? 2);
const RATE = Number(env.BENCH_RATE ?? 100);
const SECONDS = Number(env.BENCH_SECONDS ?? 20);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const FLOOR = env.BENCH_FLOOR !== '0';
type FloorMode = 'feed' | 'feed-job';
/** Which floors run, in this order (BENCH_FLOOR=0 runs none). */
const FLOORS = (env.BENCH_FLOORS ?? 'feed,feed-job').split(',').filter((f): f is FloorMode => f === 'feed' || f === 'feed-job');
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

interface Station {
  index: number;
  id: string;
  slug: string;
  ingestToken: string;
  listenerToken: string;
  /** Observations of a station are strictly later one after another (ms). */
  lastObservedAt: number;
}

function backendEnv(backend: string): Record<string, string> {
  return backend === 'cluster' ? { REDIS_URL: '', REDIS_CLUSTER_URLS: CLUSTER_URLS } : { REDIS_URL, REDIS_CLUSTER_URLS: '' };
}

/** The masters of the cluster (host:port), from CLUSTER NODES of a seed. */
async function masters(): Promise<Redis[]> {
  const seed = new URL(CLUSTER_URLS.split(',')[0]);
  const redis = new Redis(Number(seed.port), seed.hostname);
  const nodes = String(await redis.call('CLUSTER', 'NODES'));
  redis.disconnect();
  return nodes
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .filter((f) => f[2].includes('master') && !f[2].includes('fail'))
    .map((f) => {
      const [host, port] = f[1].split('@')[0].split(':');
      return new Redis(Number(port), host);
    });
}

async function redisNodes(backend: string): Promise<Redis[]> {
  if (backend === 'cluster') return masters();
  return [new Redis(REDIS_URL)];
}

async function flush(backend: string): Promise<void> {
  const nodes = await redisNodes(backend);
  for (const node of nodes) await (backend === 'cluster' ? node.flushall() : node.flushdb());
  for (const node of nodes) node.disconnect();
}

/** Calls of a command on each node so far (INFO commandstats). */
async function commandCalls(nodes: Redis[], command: string): Promise<number[]> {
  return Promise.all(
    nodes.map(async (node) => {
      const info = await node.info('commandstats');
      const match = new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info);
      return match ? Number(match[1]) : 0;
    }),
  );
}

/** Calls of every command on the nodes so far, summed (INFO commandstats). */
async function allCommandCalls(nodes: Redis[]): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const node of nodes) {
    const info = await node.info('commandstats');
    for (const match of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) calls.set(match[1], (calls.get(match[1]) ?? 0) + Number(match[2]));
  }
  return calls;
}

/** The commands Redis ran between two snapshots, per ingest, most frequent first (the bench's own INFO calls left out). */
function commandsPer(before: Map<string, number>, after: Map<string, number>, count: number): Record<string, number> {
  const per: Array<[string, number]> = [];
  for (const [name, calls] of after) {
    const delta = calls - (before.get(name) ?? 0);
    if (name !== 'info' && delta > 0) per.push([name, +(delta / Math.max(1, count)).toFixed(2)]);
  }
  per.sort((a, b) => b[1] - a[1]);
  return Object.fromEntries(per.slice(0, 12));
}

/**
 * Feed subscriptions on Redis of the gateway connections whose name holds `pid`: sharded ones on the
 * cluster (its classic invalidation subscription may sit on any node), classic ones less the
 * invalidation channel on one Redis.
 */
async function subscriptionsOf(nodes: Redis[], pid: number, sharded: boolean): Promise<number> {
  let total = 0;
  for (const node of nodes) {
    const list = String(await node.call('CLIENT', 'LIST'));
    for (const line of list.split('\n')) {
      if (!line.includes(`waveline-gateway-${pid}-`)) continue;
      const sub = /\bsub=(\d+)/.exec(line);
      const ssub = /\bssub=(\d+)/.exec(line);
      total += sharded ? Number(ssub?.[1] ?? 0) : Number(sub?.[1] ?? 0);
    }
  }
  return sharded ? total : total - 1;
}

/** Feed messages a gateway heard of stations it holds no listener for, from its /metrics (if counted). */
async function unheldMessages(port: number): Promise<number | null> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const match = /waveline_gateway_bus_messages_total\{held="no"\}\s+(\d+)/.exec(text);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

async function admin(base: string, path: string, body: unknown): Promise<Record<string, string>> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${base}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status === 201) return (await res.json()) as Record<string, string>;
    if (res.status === 503 && attempt < 5) {
      await sleep(200);
      continue;
    }
    throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  }
}

async function makeStations(base: string): Promise<Station[]> {
  const stations: Station[] = new Array(STATIONS);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < STATIONS; i = next++) {
      const station = await admin(base, '/stations', {
        slug: `cluster-${i}-${randomUUID().slice(0, 6)}`,
        name: `Bench ${i}`,
        timezone: 'Europe/Berlin',
      });
      const ingest = await admin(base, `/stations/${station.id}/credentials`, { scopes: ['ingest:write'] });
      const listener = await admin(base, `/stations/${station.id}/credentials`, { scopes: ['listener:read'] });
      stations[i] = {
        index: i,
        id: station.id,
        slug: station.slug,
        ingestToken: ingest.token,
        listenerToken: listener.token,
        lastObservedAt: 0,
      };
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return stations;
}

interface Roles {
  webs: Array<{ child: ReturnType<typeof startRole>; base: string }>;
  gateways: Array<{ child: ReturnType<typeof startRole>; port: number }>;
  worker: ReturnType<typeof startRole>;
}

async function startRoles(roleEnv: Record<string, string>): Promise<Roles> {
  const webs = [];
  for (let i = 0; i < WEBS; i++) {
    const port = await freePort();
    webs.push({ child: startRole('web', { ...roleEnv, PORT: String(port) }), base: `http://127.0.0.1:${port}` });
  }
  const gateways = [];
  for (let i = 0; i < GATEWAYS; i++) {
    const port = await freePort();
    gateways.push({ child: startRole('gateway', { ...roleEnv, PORT: String(port) }), port });
  }
  const worker = startRole('worker', { ...roleEnv, WORKER_PORT: '0' });
  const roles = { webs, gateways, worker };
  try {
    for (const web of webs) await waitUntilReady(web.base);
    for (const gateway of gateways) await healthy(`http://127.0.0.1:${gateway.port}/healthz`);
  } catch (err) {
    await stopRoles(roles);
    throw err;
  }
  return roles;
}

/** A gateway answers /healthz once it listens (it has no /readyz). */
async function healthy(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer`);
    await sleep(100);
  }
}

async function stopRoles(roles: Roles): Promise<void> {
  // A child killed on purpose (the lost gateway) has exited already: stopRole would wait for it forever.
  const alive = [...roles.webs.map((w) => w.child), ...roles.gateways.map((g) => g.child), roles.worker].filter(
    (child) => child.exitCode === null && child.signalCode === null,
  );
  await Promise.all(alive.map((child) => stopRole(child)));
}

/** Gateway of station `index`: the stations are split in contiguous blocks, one per gateway. */
const gatewayOf = (index: number) => Math.min(GATEWAYS - 1, Math.floor((index * GATEWAYS) / STATIONS));

const feedUrl = (port: number, station: Station, cursor = '') =>
  `ws://127.0.0.1:${port}/v1/realtime?channels[]=${encodeURIComponent(`stations.${station.id}.feed`)}&lastEventId=${encodeURIComponent(cursor)}`;

interface IngestSample {
  ms: number;
  status: number;
  station: number;
}

async function ingest(pool: Pool, station: Station, n: number, bare: boolean): Promise<IngestSample> {
  const sent = now();
  const body = JSON.stringify({
    eventId: randomUUID(),
    observedAt: (station.lastObservedAt = Math.max(Date.now(), station.lastObservedAt + 1)),
    artist: `Artist ${station.index}`,
    title: `Song ${n} @${sent.toFixed(3)}`,
    durationSeconds: 240,
    isPlaying: true,
  });
  const res = await pool.request({
    method: 'POST',
    path: bare ? `/ingest?station=${encodeURIComponent(station.id)}` : `/api/v1/integrations/playback?stationSlug=${station.slug}`,
    headers: { authorization: `Bearer ${station.ingestToken}`, 'content-type': 'application/json' },
    body,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200 && Math.random() < 0.01) log(`ingest ${res.statusCode}: ${text.slice(0, 200)}`);
  return { ms: now() - sent, status: res.statusCode, station: station.index };
}

/** An open loop of ingests: `rate` a second for `seconds`, station after station, web after web. */
async function ingestLoop(
  pools: Pool[],
  stations: Station[],
  rate: number,
  seconds: number,
  offset = 0,
  bare = false,
): Promise<IngestSample[]> {
  const total = rate * seconds;
  const start = now();
  const pending: Array<Promise<IngestSample>> = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - now();
    if (wait > 1) await sleep(wait);
    const station = stations[(i * 7919 + offset) % stations.length];
    pending.push(ingest(pools[i % pools.length], station, offset + i, bare));
  }
  return Promise.all(pending);
}

const pidCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);

type Fleet = ReturnType<typeof startChild>;

async function forkReady(script: string, args: string[]): Promise<ChildProcess> {
  const child = fork(new URL(script, import.meta.url).pathname, args, { stdio: 'inherit' });
  await new Promise<void>((ok, fail) => {
    child.once('message', () => ok());
    child.once('exit', (code) => fail(new Error(`${script} exited (${code})`)));
  });
  return child;
}

/** Redis commands per ingest between two snapshots, every command summed (the bench's own INFO calls left out). */
function commandsTotal(before: Map<string, number>, after: Map<string, number>, count: number): number {
  let total = 0;
  for (const [name, calls] of after) if (name !== 'info') total += calls - (before.get(name) ?? 0);
  return +(total / Math.max(1, count)).toFixed(1);
}

/**
 * The floors on the same Redis, Waveline's processes stopped: the same listeners, stations, split, rate and
 * frame size on bare relays ((S)SUBSCRIBE → uWebSockets.js), the ingests on bare ingest servers, one floor
 * after the other (BENCH_FLOORS), each with ingest servers of its own: `feed` (INSERT + (S)PUBLISH) and
 * `feed-job` (the same and one awaited BullMQ job, completed by a bare worker process).
 */
async function floorPhase(backend: string, stations: Station[], frameBytes: number, fleet: Fleet) {
  const redisArg = backend === 'cluster' ? CLUSTER_URLS : REDIS_URL;
  log(`${backend}: floor — ${WEBS} bare ingest servers, ${GATEWAYS} bare relays, frames of ${frameBytes} bytes`);
  const relays: Fleet[] = [];
  const nodes = await redisNodes(backend);
  try {
    const relayPorts: number[] = [];
    for (let i = 0; i < GATEWAYS; i++) {
      const relay = startChild('../cluster/relay.ts', [redisArg]);
      relays.push(relay);
      relayPorts.push(await relay.request<number>({ type: 'port' }));
    }
    const targets = Array.from({ length: CLIENTS }, (_, k) => {
      const station = stations[k % STATIONS];
      return { url: feedUrl(relayPorts[gatewayOf(station.index)], station), station: station.index };
    });
    const opened = await fleet.request<{ opened: number; failed: number }>({ type: 'open', targets });
    if (opened.failed) throw new Error(`${backend} floor: ${opened.failed} listeners could not connect`);
    const listenersOf = new Map<number, number>();
    for (const t of targets) listenersOf.set(t.station, (listenersOf.get(t.station) ?? 0) + 1);
    const floors: Partial<Record<FloorMode, Awaited<ReturnType<typeof floorRun>>>> = {};
    for (const mode of FLOORS)
      floors[mode] = await floorRun(backend, mode, redisArg, stations, frameBytes, fleet, relays, listenersOf, nodes);
    return floors;
  } finally {
    await fleet.request({ type: 'close' }).catch(() => {});
    for (const relay of relays) await relay.stop();
    for (const node of nodes) node.disconnect();
  }
}

/** One floor's open loop of ingests, on bare ingest servers of `mode` (and, for `feed-job`, a bare worker). */
async function floorRun(
  backend: string,
  mode: FloorMode,
  redisArg: string,
  stations: Station[],
  frameBytes: number,
  fleet: Fleet,
  relays: Fleet[],
  listenersOf: Map<number, number>,
  nodes: Redis[],
) {
  log(`${backend}: floor ${mode}${mode === 'feed-job' ? ' (and a bare BullMQ worker)' : ''}: ingest ${RATE}/s for ${SECONDS} s`);
  const servers: Array<{ child: ChildProcess; base: string }> = [];
  const pools: Pool[] = [];
  let worker: ChildProcess | null = null;
  try {
    // The worker first: the warm-up's jobs are awaited too.
    if (mode === 'feed-job') worker = await forkReady('./support/bareJobWorker.ts', [redisArg]);
    for (let i = 0; i < WEBS; i++) {
      const port = await freePort();
      const child = await forkReady('./support/ingestBaseline.ts', [String(port), DATABASE_URL, redisArg, mode, String(frameBytes)]);
      servers.push({ child, base: `http://127.0.0.1:${port}` });
    }
    for (const server of servers) pools.push(new Pool(server.base, { connections: 32 }));
    // Warm-up: one ingest per station (prepared statements, connections, BullMQ's scripts), not measured.
    await ingestLoop(pools, stations, Math.min(RATE * 2, 300), Math.ceil(STATIONS / Math.min(RATE * 2, 300)), 1_000_000, true);
    await sleep(1000);
    const relayPids = relays.map((r) => r.process.pid!);
    const serverPids = servers.map((s) => s.child.pid!);
    const idleFrom = pidCpu(relayPids);
    await sleep(3000);
    const relayIdleMsPerSecond = (pidCpu(relayPids) - idleFrom) / 3;
    const statsBefore = await jobStats(servers);
    const commandsBefore = await allCommandCalls(nodes);
    const started = now();
    const cpuBefore = {
      relays: pidCpu(relayPids),
      servers: pidCpu(serverPids),
      worker: worker ? cpuMs(worker.pid!) : 0,
      redis: cpuMsOf('redis-server'),
      postgres: cpuMsOf('postgres'),
    };
    await fleet.request({ type: 'measure' });
    const samples = await ingestLoop(pools, stations, RATE, SECONDS, 0, true);
    const ok = samples.filter((s) => s.status === 200);
    if (ok.length < samples.length)
      log(
        `${backend} floor ${mode}: ${samples.length - ok.length} ingests failed: ${[...new Set(samples.map((s) => s.status))].join(', ')}`,
      );
    const expected = ok.reduce((n, s) => n + (listenersOf.get(s.station) ?? 0), 0);
    const delivery = await fleet.request<{ delivered: number; p50: number; p90: number; p99: number; max: number }>({
      type: 'wait',
      expected,
      timeoutMs: 60_000,
    });
    const seconds = (now() - started) / 1000;
    const cpuAfter = {
      relays: pidCpu(relayPids),
      servers: pidCpu(serverPids),
      worker: worker ? cpuMs(worker.pid!) : 0,
      redis: cpuMsOf('redis-server'),
      postgres: cpuMsOf('postgres'),
    };
    const commandsAfter = await allCommandCalls(nodes);
    const statsAfter = await jobStats(servers);
    const per = (a: number, b: number) => +((a - b) / Math.max(1, ok.length)).toFixed(3);
    return {
      ingests: samples.length,
      ingestFailures: samples.length - ok.length,
      ingestMs: summary(ok.map((s) => s.ms)),
      fanoutMs: {
        p50: +delivery.p50.toFixed(1),
        p90: +delivery.p90.toFixed(1),
        p99: +delivery.p99.toFixed(1),
        max: +delivery.max.toFixed(1),
      },
      delivered: `${delivery.delivered}/${expected}`,
      frameBytes,
      // The awaited jobs of the measured ingests, and those whose result did not come within 2 s (feed-job).
      jobs:
        mode === 'feed-job'
          ? { added: statsAfter.jobs - statsBefore.jobs, timedOut: statsAfter.jobTimeouts - statsBefore.jobTimeouts }
          : undefined,
      // As Waveline's: every client of the Redis counts (on one Redis, other databases' too).
      redisCommandsPerIngest: commandsPer(commandsBefore, commandsAfter, ok.length),
      redisCommandsPerIngestTotal: commandsTotal(commandsBefore, commandsAfter, ok.length),
      cpu: {
        relayMsPerChange: per(cpuAfter.relays, cpuBefore.relays),
        relayMsPerChangeLessIdle: +((cpuAfter.relays - cpuBefore.relays - relayIdleMsPerSecond * seconds) / Math.max(1, ok.length)).toFixed(
          3,
        ),
        relayIdleMsPerSecond: +relayIdleMsPerSecond.toFixed(2),
        ingestServerMsPerIngest: per(cpuAfter.servers, cpuBefore.servers),
        workerMsPerIngest: worker ? per(cpuAfter.worker, cpuBefore.worker) : undefined,
        redisMsPerIngest: per(cpuAfter.redis, cpuBefore.redis),
        postgresMsPerIngest: per(cpuAfter.postgres, cpuBefore.postgres),
      },
    };
  } finally {
    for (const pool of pools) await pool.close();
    await Promise.all(servers.map((s) => stopRole(s.child)));
    if (worker) await stopRole(worker);
  }
}

/** The bare ingest servers' job counts so far, summed (their GET /stats; zeros in `feed` mode). */
async function jobStats(servers: Array<{ base: string }>): Promise<{ jobs: number; jobTimeouts: number }> {
  const total = { jobs: 0, jobTimeouts: 0 };
  for (const server of servers) {
    const stats = (await (await fetch(`${server.base}/stats`)).json()) as { jobs: number; jobTimeouts: number };
    total.jobs += stats.jobs;
    total.jobTimeouts += stats.jobTimeouts;
  }
  return total;
}

async function runBackend(backend: string) {
  log(`${backend}: fresh database, Redis flushed, ${WEBS} web + ${GATEWAYS} gateway + 1 worker`);
  await recreateDatabase(DATABASE_URL);
  await flush(backend);
  const roleEnv = { ...BENCH_ENV, DATABASE_URL, ...backendEnv(backend), LOG_LEVEL: 'warn', GATEWAY_MAX_CONNECTIONS_PER_IP: '1000000' };
  const migrate = startRole('migrate', roleEnv);
  await new Promise((ok) => migrate.on('exit', ok));
  const roles = await startRoles(roleEnv);
  const fleet = startChild('../cluster/fleet.ts', []);
  fleet.process.setMaxListeners(100);
  const nodes = await redisNodes(backend);
  try {
    const stations = await makeStations(roles.webs[0].base);
    log(`${backend}: ${STATIONS} stations; ${CLIENTS} listeners connecting`);
    const targets = Array.from({ length: CLIENTS }, (_, k) => {
      const station = stations[k % STATIONS];
      return { url: feedUrl(roles.gateways[gatewayOf(station.index)].port, station), station: station.index };
    });
    const opened = await fleet.request<{ opened: number; failed: number; ms: number; syncedMs: number }>({ type: 'open', targets });
    if (opened.failed) throw new Error(`${backend}: ${opened.failed} listeners could not connect`);
    const listenersOf = new Map<number, number>();
    for (const t of targets) listenersOf.set(t.station, (listenersOf.get(t.station) ?? 0) + 1);

    const pools = roles.webs.map((w) => new Pool(w.base, { connections: 32 }));
    // Warm-up: one ingest per station (the first of a station makes its rows), not measured.
    await ingestLoop(pools, stations, Math.min(RATE * 2, 300), Math.ceil(STATIONS / Math.min(RATE * 2, 300)), 1_000_000);
    await sleep(1000);

    // The gateways' CPU while their listeners are idle (timers, metrics, the slot audit): a run's CPU
    // less this is what the changes cost.
    const gatewayPids0 = roles.gateways.map((g) => g.child.pid!);
    const idleFrom = pidCpu(gatewayPids0);
    const idleWebsFrom = pidCpu(roles.webs.map((w) => w.child.pid!));
    const idleWorkerFrom = cpuMs(roles.worker.pid!);
    await sleep(5000);
    const gatewayIdleMsPerSecond = (pidCpu(gatewayPids0) - idleFrom) / 5;
    const websIdleMsPerSecond = (pidCpu(roles.webs.map((w) => w.child.pid!)) - idleWebsFrom) / 5;
    const workerIdleMsPerSecond = (cpuMs(roles.worker.pid!) - idleWorkerFrom) / 5;
    const spublishBefore = backend === 'cluster' ? await commandCalls(nodes, 'spublish') : [];
    const commandsBefore = await allCommandCalls(nodes);
    const gatewayPids = roles.gateways.map((g) => g.child.pid!);
    const webPids = roles.webs.map((w) => w.child.pid!);
    const loopStarted = now();
    const cpuBefore = {
      gateways: pidCpu(gatewayPids),
      webs: pidCpu(webPids),
      worker: cpuMs(roles.worker.pid!),
      redis: cpuMsOf('redis-server'),
      postgres: cpuMsOf('postgres'),
    };
    await fleet.request({ type: 'measure' });
    log(`${backend}: ingest ${RATE}/s for ${SECONDS} s`);
    const samples = await ingestLoop(pools, stations, RATE, SECONDS);
    const ok = samples.filter((s) => s.status === 200);
    if (ok.length < samples.length)
      log(`${backend}: ${samples.length - ok.length} ingests failed: ${[...new Set(samples.map((s) => s.status))].join(', ')}`);
    const expected = ok.reduce((n, s) => n + (listenersOf.get(s.station) ?? 0), 0);
    const delivery = await fleet.request<{
      delivered: number;
      meanFrameBytes: number;
      unexpectedCloses: number;
      p50: number;
      p90: number;
      p99: number;
      max: number;
    }>({
      type: 'wait',
      expected,
      timeoutMs: 60_000,
    });
    const loopSeconds = (now() - loopStarted) / 1000;
    const cpuAfter = {
      gateways: pidCpu(gatewayPids),
      webs: pidCpu(webPids),
      worker: cpuMs(roles.worker.pid!),
      redis: cpuMsOf('redis-server'),
      postgres: cpuMsOf('postgres'),
    };
    const spublishAfter = backend === 'cluster' ? await commandCalls(nodes, 'spublish') : [];
    const commandsAfter = await allCommandCalls(nodes);
    const spublish = spublishAfter.map((after, i) => after - spublishBefore[i]);
    const spublishTotal = spublish.reduce((a, b) => a + b, 0);

    const held = roles.gateways.map((_, g) => stations.filter((s) => gatewayOf(s.index) === g).length);
    const subscriptions = [];
    for (let g = 0; g < roles.gateways.length; g++) {
      subscriptions.push({
        gateway: g + 1,
        stationsHeld: held[g],
        feedSubscriptionsOnRedis: await subscriptionsOf(nodes, gatewayPids[g], backend === 'cluster'),
        messagesOfStationsNotHeld: await unheldMessages(roles.gateways[g].port),
      });
    }

    // The loss of a gateway: gateway 1 is killed; its listeners reconnect to the last gateway with their
    // cursors while ingests go on; the time until all of them have `synced` again.
    let gatewayLoss: Record<string, unknown> | null = null;
    if (roles.gateways.length > 1) {
      const lost = stations.filter((s) => gatewayOf(s.index) === 0).map((s) => s.index);
      log(`${backend}: gateway 1 killed; ${lost.length} stations' listeners move to gateway ${roles.gateways.length}`);
      const loop = ingestLoop(pools, stations, RATE, 5, 2_000_000);
      roles.gateways[0].child.kill('SIGKILL');
      const dropped = await fleet.request<Array<{ station: number; cursor: string }>>({ type: 'drop', stations: lost });
      const to = roles.gateways[roles.gateways.length - 1].port;
      const reopened = await fleet.request<{ opened: number; failed: number; ms: number; syncedMs: number }>({
        type: 'open',
        targets: dropped.map((d) => ({ url: feedUrl(to, stations[d.station], d.cursor), station: d.station })),
      });
      await loop;
      gatewayLoss = { listeners: dropped.length, reconnectedMs: reopened.ms, allSyncedMs: reopened.syncedMs, failed: reopened.failed };
    }

    for (const pool of pools) await pool.close();
    const ingestMs = summary(ok.map((s) => s.ms));
    let floors: Awaited<ReturnType<typeof floorPhase>> = {};
    if (FLOOR) {
      await fleet.request({ type: 'close' });
      await stopRoles(roles);
      floors = await floorPhase(backend, stations, delivery.meanFrameBytes, fleet);
    }
    return {
      backend,
      stations: STATIONS,
      listeners: opened.opened,
      connectMs: opened.ms,
      ingests: samples.length,
      ingestFailures: samples.length - ok.length,
      ingestMs,
      fanoutMs: {
        p50: +delivery.p50.toFixed(1),
        p90: +delivery.p90.toFixed(1),
        p99: +delivery.p99.toFixed(1),
        max: +delivery.max.toFixed(1),
      },
      delivered: `${delivery.delivered}/${expected}`,
      unexpectedCloses: delivery.unexpectedCloses,
      subscriptions,
      // Every client of the Redis counts (on one Redis, other databases' too): read it on a quiet machine.
      redisCommandsPerIngest: commandsPer(commandsBefore, commandsAfter, ok.length),
      redisCommandsPerIngestTotal: commandsTotal(commandsBefore, commandsAfter, ok.length),
      spublishPerMaster:
        backend === 'cluster' ? spublish.map((n) => ({ calls: n, share: +(n / Math.max(1, spublishTotal)).toFixed(3) })) : undefined,
      cpu: {
        // Each change is heard by the one gateway holding its station.
        gatewayMsPerChange: +((cpuAfter.gateways - cpuBefore.gateways) / Math.max(1, ok.length)).toFixed(3),
        gatewayMsPerChangeLessIdle: +(
          (cpuAfter.gateways - cpuBefore.gateways - gatewayIdleMsPerSecond * loopSeconds) /
          Math.max(1, ok.length)
        ).toFixed(3),
        gatewayIdleMsPerSecond: +gatewayIdleMsPerSecond.toFixed(2),
        gatewayUsPerFrame: +(((cpuAfter.gateways - cpuBefore.gateways) * 1000) / Math.max(1, delivery.delivered)).toFixed(2),
        webMsPerIngest: +((cpuAfter.webs - cpuBefore.webs) / Math.max(1, ok.length)).toFixed(3),
        workerMsPerIngest: +((cpuAfter.worker - cpuBefore.worker) / Math.max(1, ok.length)).toFixed(3),
        // The web processes' and the worker's CPU while nothing is sent (timers, BullMQ's polling, slot-map reads).
        websIdleMsPerSecond: +websIdleMsPerSecond.toFixed(2),
        workerIdleMsPerSecond: +workerIdleMsPerSecond.toFixed(2),
        redisMsPerIngest: +((cpuAfter.redis - cpuBefore.redis) / Math.max(1, ok.length)).toFixed(3),
        postgresMsPerIngest: +((cpuAfter.postgres - cpuBefore.postgres) / Math.max(1, ok.length)).toFixed(3),
      },
      gatewayLoss,
      floor: floors.feed ?? null,
      floorJob: floors['feed-job'] ?? null,
    };
  } finally {
    await fleet.request({ type: 'close' }).catch(() => {});
    await fleet.stop();
    for (const node of nodes) node.disconnect();
    await stopRoles(roles);
  }
}

/** The replica phase: cached now-playing reads on one web, with and without a replica configured. */
async function replicaReads(): Promise<{ withoutReplicaRps: number; withReplicaRps: number; ratio: number; rounds: number } | null> {
  let replicas = env.BENCH_DATABASE_REPLICA_URLS ?? '';
  let primary = env.BENCH_REPLICA_PRIMARY_URL ?? '';
  if (!replicas && existsSync('scripts/pg-replica.sh')) {
    execFileSync('bash', ['scripts/pg-replica.sh', 'start'], { stdio: 'inherit' });
    const name = new URL(DATABASE_URL).pathname.slice(1);
    primary = `postgres://postgres@127.0.0.1:5440/${name}`;
    replicas = `postgres://postgres@127.0.0.1:5441/${name}`;
  }
  if (!replicas || !primary) return null;
  log('replica: one web, cached now-playing reads with and without DATABASE_REPLICA_URLS');
  await recreateDatabase(primary);
  await flush('one');
  const base = { ...BENCH_ENV, DATABASE_URL: primary, REDIS_URL, REDIS_CLUSTER_URLS: '', LOG_LEVEL: 'warn' };
  const migrate = startRole('migrate', base);
  await new Promise((ok) => migrate.on('exit', ok));
  const start = async (withReplica: boolean) => {
    const port = await freePort();
    const child = startRole('web', { ...base, PORT: String(port), DATABASE_REPLICA_URLS: withReplica ? replicas : '' });
    await waitUntilReady(`http://127.0.0.1:${port}`);
    return { child, base: `http://127.0.0.1:${port}` };
  };
  const without = await start(false);
  const withReplica = await start(true);
  try {
    const [station] = await (async () => {
      const s = await admin(without.base, '/stations', {
        slug: `replica-${randomUUID().slice(0, 6)}`,
        name: 'Replica FM',
        timezone: 'Europe/Berlin',
      });
      const listener = await admin(without.base, `/stations/${s.id}/credentials`, { scopes: ['listener:read'] });
      return [{ slug: s.slug, token: listener.token }];
    })();
    // Let the replica replay the station (its apply delay) before the reads.
    await sleep(Number(env.BENCH_REPLICA_SETTLE_MS ?? 4000));
    const path = `/api/v1/stations/${station.slug}/now-playing`;
    const headers = { authorization: `Bearer ${station.token}` };
    for (const web of [without, withReplica]) {
      const first = await fetch(web.base + path, { headers });
      if (first.status !== 200) throw new Error(`replica phase: ${first.status} ${await first.text()}`);
      await autocannon({ url: web.base + path, headers, duration: 1, connections: 50 });
    }
    const rps: Record<'without' | 'with', number[]> = { without: [], with: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, web] of [
        ['without', without],
        ['with', withReplica],
      ] as const) {
        const result = await autocannon({ url: web.base + path, headers, duration: 5, connections: 50 });
        if (result.non2xx) throw new Error(`replica phase: ${result.non2xx} answers not 2xx (${name})`);
        rps[name].push(result.requests.average);
      }
    }
    const ratio = median(rps.with) / median(rps.without);
    return {
      withoutReplicaRps: Math.round(median(rps.without)),
      withReplicaRps: Math.round(median(rps.with)),
      ratio: +ratio.toFixed(3),
      rounds: ROUNDS,
    };
  } finally {
    await stopRole(without.child);
    await stopRole(withReplica.child);
  }
}

const loadAverages: number[] = [];
const loadTimer = setInterval(() => {
  try {
    loadAverages.push(Number(execFileSync('cat', ['/proc/loadavg']).toString().split(' ')[0]));
  } catch {
    // not Linux
  }
}, 5000);

if (BACKENDS.includes('cluster') && existsSync('scripts/redis-cluster.sh'))
  execFileSync('bash', ['scripts/redis-cluster.sh', 'start'], { stdio: 'inherit' });
const results = [];
for (const backend of BACKENDS) results.push(await runBackend(backend));
const replica = env.BENCH_REPLICA === '0' ? null : await replicaReads();
clearInterval(loadTimer);

const one = results.find((r) => r.backend === 'one');
const cluster = results.find((r) => r.backend === 'cluster');
const verdict = (ok: boolean) => (ok ? 'PASS' : 'over');
const targets: Record<string, string> = {};
if (one && cluster) {
  const fanout = cluster.fanoutMs.p99 / one.fanoutMs.p99;
  const ingestRatio = cluster.ingestMs.p99 / one.ingestMs.p99;
  targets.fanoutP99 = `${fanout.toFixed(2)}× one Redis (${cluster.fanoutMs.p99} vs ${one.fanoutMs.p99} ms; target ≤ 1.2×) ${verdict(fanout <= 1.2)}`;
  targets.ingestP99 = `${ingestRatio.toFixed(2)}× one Redis (${cluster.ingestMs.p99} vs ${one.ingestMs.p99} ms; target ≤ 1.2×) ${verdict(ingestRatio <= 1.2)}`;
  if (one.floor && cluster.floor) {
    const floorFanout = cluster.floor.fanoutMs.p99 / one.floor.fanoutMs.p99;
    const floorIngest = cluster.floor.ingestMs.p99 / one.floor.ingestMs.p99;
    targets.floorFanoutP99 = `bare cluster ÷ one ${floorFanout.toFixed(2)}× (${cluster.floor.fanoutMs.p99} vs ${one.floor.fanoutMs.p99} ms) beside Waveline's ${fanout.toFixed(2)}×`;
    targets.floorIngestP99 = `bare cluster ÷ one ${floorIngest.toFixed(2)}× (${cluster.floor.ingestMs.p99} vs ${one.floor.ingestMs.p99} ms) beside Waveline's ${ingestRatio.toFixed(2)}×`;
  }
  if (one.floorJob && cluster.floorJob) {
    // The floor with the ingest's awaited job: between the bare feed's ratio and Waveline's.
    const besides = (feed: number | null) => `${feed === null ? '' : `the bare feed's ${feed.toFixed(2)}× and `}Waveline's`;
    const feedFanout = one.floor && cluster.floor ? cluster.floor.fanoutMs.p99 / one.floor.fanoutMs.p99 : null;
    const feedIngest = one.floor && cluster.floor ? cluster.floor.ingestMs.p99 / one.floor.ingestMs.p99 : null;
    const jobFanout = cluster.floorJob.fanoutMs.p99 / one.floorJob.fanoutMs.p99;
    const jobIngest = cluster.floorJob.ingestMs.p99 / one.floorJob.ingestMs.p99;
    targets.floorJobFanoutP99 = `bare feed-job cluster ÷ one ${jobFanout.toFixed(2)}× (${cluster.floorJob.fanoutMs.p99} vs ${one.floorJob.fanoutMs.p99} ms) beside ${besides(feedFanout)} ${fanout.toFixed(2)}×`;
    targets.floorJobIngestP99 = `bare feed-job cluster ÷ one ${jobIngest.toFixed(2)}× (${cluster.floorJob.ingestMs.p99} vs ${one.floorJob.ingestMs.p99} ms) beside ${besides(feedIngest)} ${ingestRatio.toFixed(2)}×`;
  }
}
if (cluster?.spublishPerMaster) {
  const shares = cluster.spublishPerMaster.map((m) => m.share);
  const within = shares.length === 3 && shares.every((s) => Math.abs(s - 1 / 3) <= 0.35 / 3);
  targets.spublishShares = `${shares.join(', ')} (each within ±35 % of a third) ${verdict(within)}`;
}
for (const r of results) {
  const others = r.subscriptions.map((s) => s.messagesOfStationsNotHeld);
  const subsMatch = r.subscriptions.every((s) => s.feedSubscriptionsOnRedis === s.stationsHeld);
  targets[`${r.backend}: subscriptions = stations held`] = verdict(subsMatch);
  if (others.every((n) => n !== null))
    targets[`${r.backend}: frames of stations not held`] = `${others.join(', ')} ${verdict(others.every((n) => n === 0))}`;
  targets[`${r.backend}: delivered`] = `${r.delivered} ${verdict(r.delivered.split('/')[0] === r.delivered.split('/')[1])}`;
  if (r.floor)
    targets[`${r.backend}: floor delivered`] =
      `${r.floor.delivered} ${verdict(r.floor.delivered.split('/')[0] === r.floor.delivered.split('/')[1])}`;
  if (r.floorJob) {
    targets[`${r.backend}: feed-job floor delivered`] =
      `${r.floorJob.delivered} ${verdict(r.floorJob.delivered.split('/')[0] === r.floorJob.delivered.split('/')[1])}`;
    const jobs = r.floorJob.jobs!;
    targets[`${r.backend}: feed-job floor jobs answered within 2 s`] =
      `${jobs.added - jobs.timedOut}/${jobs.added} ${verdict(jobs.timedOut === 0)}`;
  }
  // Side by side on this Redis: the bare feed floor, the bare feed-job floor and Waveline.
  type Percentiles = { p50: number; p99: number };
  const sideBySide = (of: (x: { ingestMs: Percentiles; fanoutMs: Percentiles; redisCommandsPerIngestTotal: number }) => string) =>
    [r.floor ? `bare feed ${of(r.floor)}` : null, r.floorJob ? `bare feed-job ${of(r.floorJob)}` : null, `Waveline ${of(r)}`]
      .filter((part) => part !== null)
      .join(', ');
  const pcts = (ms: Percentiles) => `${ms.p50} / ${ms.p99} ms`;
  targets[`${r.backend}: ingest p50 / p99`] = sideBySide((x) => pcts(x.ingestMs));
  targets[`${r.backend}: fan-out p50 / p99`] = sideBySide((x) => pcts(x.fanoutMs));
  targets[`${r.backend}: Redis commands per ingest`] = sideBySide((x) => String(x.redisCommandsPerIngestTotal));
}
if (replica) targets.replicaReads = `${replica.ratio}× without (target ≥ 0.95) ${verdict(replica.ratio >= 0.95)}`;

console.log(
  JSON.stringify(
    {
      when: new Date().toISOString(),
      machine: `load average (1 min) during the run: ${loadAverages.map((l) => l.toFixed(1)).join(', ')}`,
      results,
      replica,
      targets,
    },
    null,
    2,
  ),
);
