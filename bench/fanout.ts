// `npm run bench:fanout`: the realtime gateway's fan-out, over WebSocket and over Server-Sent Events,
// beside a bare uWebSockets.js app.
//
// For each N (BENCH_SIZES, default 1000,5000): a gateway process holds N WebSocket clients on one
// station (the fleet is a second process); the bench writes BENCH_ROWS feed rows through the real write
// path (Postgres, then Redis) and the fleet measures delivery. The same again with N SSE clients
// (BENCH_TRANSPORTS, default ws,sse). Then a bare uWS app in its own process, fed the same frames over
// Redis on the WebSocket run's timeline, serves the same fleet size. Reported: delivered frames/s, p50/p99
// publish→receive latency, RSS per idle connection, CPU time per delivered frame.
//
// Listener time (`stream`, in BENCH_TRANSPORTS by default): the same WebSocket run with `stream=bench`
// on the URL, a stream BENCH_STREAM_LATENCY_S (2) behind: every row reaches the clients when it becomes
// audible (its observedAt + latency), through the station's one delayed view. Its latency is measured
// from that moment; its CPU per delivered frame is compared with the undelayed run's (target ≤ 1.1×).
//
// BENCH_COMPARE_DIR=<checkout>[,<checkout>…] also runs each checkout's gateway (e.g. a `git worktree` of an
// earlier commit, with its node_modules) right after this one's, on the same database, station and
// fleet, for the `gateway` and `stream` runs: both commits in one run, back to back, so the machine's load
// weighs on both alike (BENCH_COMPARE_FIRST=1: the compared checkout's run first, to alternate the order
// across invocations). Rows of a compared checkout are labelled `gateway@<dir>`.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { recreateDatabase } from '../src/lib/migrate.ts';
import type { FeedBus } from '../src/feed/bus.ts';
import type { Child } from './fanout/proc.ts';

process.env.DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_fanout';
process.env.REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
process.env.LOG_LEVEL ??= 'warn';
process.env.RATE_LIMIT_ANONYMOUS_PER_MINUTE = process.env.BENCH_ANONYMOUS_PER_MINUTE ?? '0'; // benchmarks run with rate limits off (docs/benchmarks.md)
process.env.GATEWAY_MAX_CONNECTIONS_PER_IP = '1000000';

const { loadConfig } = await import('../src/config.ts');
const { createLogger } = await import('../src/lib/logger.ts');
const { migrate } = await import('../src/roles/migrate.ts');
const { createServices } = await import('../src/roles/services.ts');
const { createStation } = await import('../src/domains/stations/commands.ts');
const { inTransaction } = await import('../src/lib/db.ts');
const { upsertFeedRow } = await import('../src/feed/rows.ts');
const { eventFrame, payloadJson } = await import('../src/gateway/frames.ts');
const { feedRowId, stationChannel } = await import('../src/feed/names.ts');
const { startChild } = await import('./fanout/proc.ts');

const SIZES = (process.env.BENCH_SIZES ?? '1000,5000').split(',').map(Number);
const TRANSPORTS = (process.env.BENCH_TRANSPORTS ?? 'ws,stream,sse').split(',');
const COMPARE_DIRS = (process.env.BENCH_COMPARE_DIR ?? '')
  .split(',')
  .map((dir) => dir.trim())
  .filter((dir) => dir !== '');
const COMPARE_FIRST = process.env.BENCH_COMPARE_FIRST === '1';
/** The latency of the `stream=bench` run's stream, in seconds. */
const STREAM_LATENCY_S = Number(process.env.BENCH_STREAM_LATENCY_S ?? 2);
const ROWS = Number(process.env.BENCH_ROWS ?? 200);
/** Fleet clients that record latency (1 in SAMPLE_EVERY); all of them count frames. */
const SAMPLE_EVERY = Number(process.env.BENCH_SAMPLE_EVERY ?? 10);
/** Pause between rows in the paced pass (latency); default offers about 20 000 frames/s. */
const intervalFor = (n: number) => Number(process.env.BENCH_INTERVAL_MS ?? Math.max(20, n / 20));

const config = loadConfig();
const logger = createLogger(config, 'bench');
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

await recreateDatabase(config.databaseUrl);
await migrate(config);
const svc = await createServices(config, logger);
const { after: station } = await createStation(
  svc.db,
  svc.invalidation,
  { slug: `bench-${Date.now().toString(36)}`, name: 'Bench FM', timezone: 'Europe/Berlin' },
  new Date(),
);
await svc
  .db('stations')
  .where({ id: station.id })
  .update({
    profile: JSON.stringify({ streamUrls: [{ key: 'bench', url: 'https://example.org/bench.mp3', latencySeconds: STREAM_LATENCY_S }] }),
  });
const channel = stationChannel(station.id);
const bareChannel = `waveline:bench:bare:${station.id}`;

// A realistic current state: a new connection receives these two rows first.
await inTransaction(svc.db, (tx) =>
  upsertFeedRow(tx, svc.bus, {
    stationId: station.id,
    kind: 'schedule',
    entry: 'current',
    data: { contractVersion: 1, timezone: 'Europe/Berlin', broadcasts: [], truncated: false },
  }),
);
/** Each row's observation moment, strictly increasing (ms): a delayed stream hears every one of them. */
let lastMoment = 0;
const nextMoment = () => (lastMoment = Math.max(lastMoment + 1, Date.now()));
const trackData = (i: number, moment = nextMoment()) => ({
  contractVersion: 1,
  stationId: 'bench',
  timezone: 'Europe/Berlin',
  track: {
    artist: `Artist ${i}`,
    title: `Title ${i}`,
    album: 'Bench Sessions',
    durationSeconds: 215,
    artworkUrl: 'https://example.org/artwork/0123456789abcdef.jpg',
    isPlaying: true,
  },
  timing: { observedAt: new Date().toISOString(), elapsedSeconds: 0, endsAt: null },
  elapsedSeconds: 0,
  endsAt: null,
  freshness: { status: 'fresh', ageSeconds: 0, thresholdSeconds: 600, observedAt: new Date(moment).toISOString(), receivedAt: null },
  /** The observation moment in ms: the fleet times a delayed stream's frames from `observedMs + latency`. */
  observedMs: moment,
  sentAt: 0,
});
await inTransaction(svc.db, (tx) =>
  upsertFeedRow(tx, svc.bus, { stationId: station.id, kind: 'now-playing', entry: 'current', data: trackData(-1, Date.now() - 60_000) }),
);
/** Messages a new gateway connection receives before live events: the two rows, then `synced` (WebSocket: with `lastEventId=`). */
const SNAPSHOT_MESSAGES = 3;

interface Stats {
  cpuMicros: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
}
interface Delivery {
  delivered: number;
  fleetCpuMicrosPerFrame: number;
  unexpectedCloses: number;
  firstAt: number;
  lastAt: number;
  samples: number;
  p50: number;
  p90: number;
  p99: number;
  min: number;
  max: number;
}

// The gateway's rows take the real write path; the stamp is set when the row is published on Redis,
// so both apps are timed from the same point (the Postgres commit before it is not the fan-out's cost).
let publishedAt: number[] = [];
const stampingBus: FeedBus = {
  publish(message) {
    (message.data as { sentAt: number }).sentAt = now();
    publishedAt.push(now());
    return svc.bus.publish(message);
  },
};

async function publishGateway(i: number): Promise<void> {
  await inTransaction(svc.db, (tx) =>
    upsertFeedRow(tx, stampingBus, { stationId: station.id, kind: 'now-playing', entry: 'current', data: trackData(i) }),
  );
}

async function publishBare(i: number): Promise<void> {
  const updatedAt = new Date().toISOString();
  const data = trackData(i);
  data.sentAt = now();
  publishedAt.push(now());
  const payload = payloadJson(station.id, { kind: 'now-playing', entry: 'current', data, updatedAt });
  // The same frame as the gateway's, cursor included (a station's cursor is about 30 characters).
  const cursor = 'c1.AAAAAAAA~00000000~' + i.toString(36) + '~0';
  await svc.redis.publish(bareChannel, eventFrame(station.id, feedRowId('now-playing', 'current'), 'update', updatedAt, payload, cursor));
}

/**
 * Kernel counters that explain latency outliers on a loaded machine: packets dropped from the per-CPU
 * backlog (loopback bursts overflow `net.core.netdev_max_backlog` when softirq processing is starved)
 * and TCP retransmissions (each costs at least the 200 ms minimum RTO). Linux only; zeros elsewhere.
 */
async function kernelCounters(): Promise<{ backlogDrops: number; retransmits: number }> {
  try {
    const softnet = await readFile('/proc/net/softnet_stat', 'utf8');
    const backlogDrops = softnet
      .trim()
      .split('\n')
      .reduce((sum, line) => sum + parseInt(line.trim().split(/\s+/)[1], 16), 0);
    const snmp = (await readFile('/proc/net/snmp', 'utf8')).split('\n').filter((line) => line.startsWith('Tcp:'));
    const names = snmp[0].split(/\s+/);
    const values = snmp[1].split(/\s+/);
    return { backlogDrops, retransmits: Number(values[names.indexOf('RetransSegs')]) };
  } catch {
    return { backlogDrops: 0, retransmits: 0 };
  }
}

/**
 * Publishes ROWS rows, row i not before `schedule(i)` ms into the pass, and measures their delivery.
 * Returns when each row reached Redis, so the bare app can be fed on the gateway's exact timeline
 * (back to back, the gateway's rows are spaced by their Postgres commits; Redis alone is far faster).
 */
async function pass(
  server: Child,
  fleet: Child,
  n: number,
  publish: (i: number) => Promise<void>,
  schedule: (i: number) => number,
  delayMs: number | null,
) {
  await fleet.request({ type: 'measure', maxSamples: Math.ceil(n / SAMPLE_EVERY + 1) * ROWS, delayMs });
  const before = await server.request<Stats>({ type: 'stats', collect: false });
  const kernelBefore = await kernelCounters();
  const started = now();
  publishedAt = [];
  for (let i = 0; i < ROWS; i++) {
    const wait = started + schedule(i) - now();
    if (wait > 0) await sleep(wait);
    await publish(i);
  }
  const timeline = publishedAt.map((at) => at - started);
  const delivery = await fleet.request<Delivery>({ type: 'wait', expected: n * ROWS, timeoutMs: 180_000 });
  const after = await server.request<Stats>({ type: 'stats', collect: false });
  const kernelAfter = await kernelCounters();
  return {
    timeline,
    delivered: delivery.delivered,
    unexpectedCloses: delivery.unexpectedCloses,
    framesPerSecond: Math.round(delivery.delivered / ((delivery.lastAt - started) / 1000)),
    p50Ms: +delivery.p50.toFixed(1),
    p90Ms: +delivery.p90.toFixed(1),
    p99Ms: +delivery.p99.toFixed(1),
    maxMs: +delivery.max.toFixed(1),
    cpuMicrosPerFrame: +((after.cpuMicros - before.cpuMicros) / delivery.delivered).toFixed(2),
    fleetCpuMicrosPerFrame: +delivery.fleetCpuMicrosPerFrame.toFixed(2),
    backlogDrops: kernelAfter.backlogDrops - kernelBefore.backlogDrops,
    tcpRetransmits: kernelAfter.retransmits - kernelBefore.retransmits,
  };
}

type App = 'gateway' | 'gateway-stream' | 'gateway-sse' | 'bare';

/** A delayed pass's CPU per frame without the idle CPU of the latency it waits longer than an undelayed one. */
function lessIdle(pass: { cpuMicrosPerFrame: number; delivered: number }, delayMs: number | null, idleMicrosPerSecond: number) {
  if (delayMs === null) return {};
  const idle = (idleMicrosPerSecond * delayMs) / 1000;
  return { cpuMicrosPerFrameLessIdle: +(pass.cpuMicrosPerFrame - idle / Math.max(1, pass.delivered)).toFixed(2) };
}

async function run(app: App, n: number, follow?: { paced: number[]; burst: number[] }, compareDir?: string) {
  const gatewayScript = compareDir ? resolve(compareDir, 'bench/fanout/gateway.ts') : './gateway.ts';
  const server =
    app === 'bare' ? startChild('./bare.ts', [bareChannel, String(config.gateway.maxBackpressureBytes)]) : startChild(gatewayScript, []);
  const port = await server.request<number>({ type: 'port' });
  const query = `?channels[]=${encodeURIComponent(channel)}`;
  const url =
    app === 'gateway'
      ? `ws://127.0.0.1:${port}/v1/realtime${query}&lastEventId=` // asks for `synced` after the state
      : app === 'gateway-stream'
        ? `ws://127.0.0.1:${port}/v1/realtime${query}&stream=bench&lastEventId=`
        : app === 'gateway-sse'
          ? `http://127.0.0.1:${port}/v1/realtime/sse${query}`
          : `ws://127.0.0.1:${port}/bare`;
  const snapshotPerClient = app === 'bare' ? 0 : SNAPSHOT_MESSAGES;
  const fleet = startChild('./fleet.ts', []);
  try {
    // One client first, so the station's state is warm before the memory baseline; then the fleet in two
    // halves: the second half's growth is the marginal cost of a connection, without one-off growth
    // (V8 enlarging its young generation under the connection burst, allocator arenas).
    await fleet.request({ type: 'connect', url, count: 1, sampleEvery: SAMPLE_EVERY, snapshotPerClient });
    const base = await server.request<Stats>({ type: 'stats', collect: true });
    const half = Math.floor(n / 2);
    const connects = [];
    for (const count of [half - 1, n - half]) {
      const connect = await fleet.request<{ connected: number; failed: number; ms: number }>({
        type: 'connect',
        url,
        count,
        sampleEvery: SAMPLE_EVERY,
        snapshotPerClient,
      });
      if (connect.failed > 0) throw new Error(`${app}: ${connect.failed} of ${n} clients could not connect`);
      await sleep(500);
      connects.push({ ...connect, stats: await server.request<Stats>({ type: 'stats', collect: true }) });
    }
    const [mid, idle] = connects.map((c) => c.stats);
    // The server's CPU while its N connections are idle: a delayed run's passes last its latency longer
    // (the last rows become audible then), and that idle time is not the cost of a frame.
    const idleFrom = await server.request<Stats>({ type: 'stats', collect: false });
    await sleep(2000);
    const idleTo = await server.request<Stats>({ type: 'stats', collect: false });
    const idleCpuMicrosPerSecond = (idleTo.cpuMicros - idleFrom.cpuMicros) / 2;
    const publish = app === 'bare' ? publishBare : publishGateway;
    const interval = intervalFor(n);
    const delayMs = app === 'gateway-stream' ? STREAM_LATENCY_S * 1000 : null;
    const paced = await pass(server, fleet, n, publish, (i) => follow?.paced[i] ?? i * interval, delayMs);
    const burst = await pass(server, fleet, n, publish, (i) => follow?.burst[i] ?? 0, delayMs);
    return {
      app,
      label: compareDir ? `${app}@${compareDir}` : app,
      n,
      rows: ROWS,
      connectMs: connects[0].ms + connects[1].ms,
      rssPerIdleConnectionBytes: Math.round((idle.rss - mid.rss) / (n - half)),
      rssPerIdleConnectionIncludingOneOffBytes: Math.round((idle.rss - base.rss) / (n - 1)),
      heapPerIdleConnectionBytes: Math.round((idle.heapUsed - mid.heapUsed) / (n - half)),
      idleCpuMsPerSecond: +(idleCpuMicrosPerSecond / 1000).toFixed(2),
      paced: { intervalMs: interval, ...paced, timeline: undefined, ...lessIdle(paced, delayMs, idleCpuMicrosPerSecond) },
      burst: { ...burst, timeline: undefined, ...lessIdle(burst, delayMs, idleCpuMicrosPerSecond) },
      timelines: { paced: paced.timeline, burst: burst.timeline },
    };
  } finally {
    await fleet.request({ type: 'close' }).catch(() => {});
    await fleet.stop();
    await server.stop();
  }
}

const results = [];
for (const n of SIZES) {
  const runs: Array<Awaited<ReturnType<typeof run>>> = [];
  // This checkout's run and each compared checkout's, in the order asked.
  const both = async (app: 'gateway' | 'gateway-stream') => {
    const dirs = COMPARE_FIRST ? [...COMPARE_DIRS, undefined] : [undefined, ...COMPARE_DIRS];
    for (const dir of dirs) runs.push(await run(app, n, undefined, dir));
  };
  await both('gateway');
  const ws = runs.find((r) => r.label === 'gateway')!;
  if (TRANSPORTS.includes('stream')) await both('gateway-stream');
  if (TRANSPORTS.includes('sse')) runs.push(await run('gateway-sse', n));
  runs.push(await run('bare', n, ws.timelines));
  for (const result of runs) {
    console.log(JSON.stringify({ ...result, timelines: undefined }));
    results.push(result);
  }
}

console.log(`\n${ROWS} rows per pass; paced pass for latency, back-to-back pass for throughput. ${new Date().toISOString()}\n`);
console.log(
  '| N | app | delivered | paced p50 / p99 ms | burst frames/s | burst p99 ms | RSS / idle conn (marginal; all-in) | CPU µs / frame (paced, burst) | CPU µs per 1 000 frames (paced) |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  const delivered = `${r.paced.delivered + r.burst.delivered}/${2 * r.n * ROWS}`;
  console.log(
    `| ${r.n} | ${r.label} | ${delivered} | ${r.paced.p50Ms} / ${r.paced.p99Ms} | ${r.burst.framesPerSecond} | ${r.burst.p99Ms} | ${r.rssPerIdleConnectionBytes} B; ${r.rssPerIdleConnectionIncludingOneOffBytes} B | ${r.paced.cpuMicrosPerFrame}, ${r.burst.cpuMicrosPerFrame} | ${Math.round(r.paced.cpuMicrosPerFrame * 1000)} |`,
  );
}
for (const n of SIZES) {
  const gateway = results.find((r) => r.n === n && r.label === 'gateway');
  const sse = results.find((r) => r.n === n && r.app === 'gateway-sse');
  const stream = results.find((r) => r.n === n && r.label === 'gateway-stream');
  const bare = results.find((r) => r.n === n && r.app === 'bare');
  if (!gateway || !bare) continue;
  const ratio = (g: number, b: number) => (g / b).toFixed(2);
  console.log(
    `N=${n}: gateway CPU per frame ${ratio(gateway.paced.cpuMicrosPerFrame, bare.paced.cpuMicrosPerFrame)}× bare paced, ${ratio(gateway.burst.cpuMicrosPerFrame, bare.burst.cpuMicrosPerFrame)}× bare burst (target ≤ 1.2×)`,
  );
  if (stream)
    console.log(
      `N=${n}: stream= (${STREAM_LATENCY_S} s) CPU per frame ${ratio(stream.paced.cpuMicrosPerFrame, gateway.paced.cpuMicrosPerFrame)}× undelayed paced, ${ratio(stream.burst.cpuMicrosPerFrame, gateway.burst.cpuMicrosPerFrame)}× burst (target ≤ 1.1×); less the idle CPU of the ${STREAM_LATENCY_S} s it waits longer (${stream.idleCpuMsPerSecond} ms/s idle): ${ratio(stream.paced.cpuMicrosPerFrameLessIdle ?? NaN, gateway.paced.cpuMicrosPerFrame)}× paced, ${ratio(stream.burst.cpuMicrosPerFrameLessIdle ?? NaN, gateway.burst.cpuMicrosPerFrame)}× burst; p50 / p99 from the audible moment ${stream.paced.p50Ms} / ${stream.paced.p99Ms} ms paced, burst p99 ${stream.burst.p99Ms} ms (undelayed, from publish: ${gateway.paced.p50Ms} / ${gateway.paced.p99Ms}, burst ${gateway.burst.p99Ms})`,
    );
  if (sse)
    console.log(
      `N=${n}: SSE CPU per frame ${ratio(sse.paced.cpuMicrosPerFrame, gateway.paced.cpuMicrosPerFrame)}× WebSocket paced, ${ratio(sse.burst.cpuMicrosPerFrame, gateway.burst.cpuMicrosPerFrame)}× burst; p99 ${sse.paced.p99Ms} vs ${gateway.paced.p99Ms} ms (target ≤ 1.3×)`,
    );
}
for (const n of SIZES)
  for (const dir of COMPARE_DIRS)
    for (const app of ['gateway', 'gateway-stream'] as const) {
      const ours = results.find((r) => r.n === n && r.label === app);
      const theirs = results.find((r) => r.n === n && r.label === `${app}@${dir}`);
      if (!ours || !theirs) continue;
      const ratio = (a: number, b: number) => (a / b).toFixed(2);
      console.log(
        `N=${n}: ${app} CPU per frame ${ratio(ours.paced.cpuMicrosPerFrame, theirs.paced.cpuMicrosPerFrame)}× ${dir}'s paced (${ours.paced.cpuMicrosPerFrame} vs ${theirs.paced.cpuMicrosPerFrame} µs), ${ratio(ours.burst.cpuMicrosPerFrame, theirs.burst.cpuMicrosPerFrame)}× burst (${ours.burst.cpuMicrosPerFrame} vs ${theirs.burst.cpuMicrosPerFrame} µs); p50 / p99 ${ours.paced.p50Ms} / ${ours.paced.p99Ms} vs ${theirs.paced.p50Ms} / ${theirs.paced.p99Ms} ms`,
      );
    }
await svc.close();
