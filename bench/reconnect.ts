// `npm run bench:reconnect`: a reconnect storm on one gateway, and its memory per idle connection.
//
// 1. BENCH_CLIENTS (default 10 000) WebSocket clients of one gateway process, on one station with a
//    realistic state (schedule, on-air, now-playing and 20 content records of ~2 KB), all drop at once
//    (RST) and reconnect (a) without a cursor: each gets the whole state; (b) with their cursor, after 5
//    now-playing changes made while they were away: each gets what changed; (c) the same to another
//    gateway that has never served the station (their node restarted). And the floor: the same storm on
//    a bare uWS app that sends one small message per connection. Reported: time until every client has
//    `synced`, gateway CPU, Postgres queries per reconnect.
// 2. Gateway RSS per idle connection at BENCH_IDLE (default 19 000) connections, WebSocket and SSE:
//    (RSS with all of them − RSS with one) / (connections − 1), after a full collection both times.
//
// Each child process raises its open-files limit to the hard limit (bench/fanout/proc.ts); 20 000 here.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { recreateDatabase } from '../src/lib/migrate.ts';

process.env.DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_reconnect';
process.env.REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';
process.env.LOG_LEVEL ??= 'warn';
process.env.RATE_LIMIT_ANONYMOUS_PER_MINUTE = process.env.BENCH_ANONYMOUS_PER_MINUTE ?? '0'; // rate limits off for benchmarks (docs/benchmarks.md)
process.env.GATEWAY_MAX_CONNECTIONS_PER_IP = '1000000';

const { loadConfig } = await import('../src/config.ts');
const { createLogger } = await import('../src/lib/logger.ts');
const { migrate } = await import('../src/roles/migrate.ts');
const { createServices } = await import('../src/roles/services.ts');
const { createStation } = await import('../src/domains/stations/commands.ts');
const { inTransaction } = await import('../src/lib/db.ts');
const { upsertFeedRow } = await import('../src/feed/rows.ts');
const { stationChannel } = await import('../src/feed/names.ts');
const { startChild } = await import('./fanout/proc.ts');

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 10_000);
const IDLE = Number(process.env.BENCH_IDLE ?? 19_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 1000);
const CHANGES = 5;
/** Content records in the station's state (a new connection receives them all). */
const CONTENT = Number(process.env.BENCH_CONTENT ?? 20);
/** Skip the storm (BENCH_ONLY=memory) or the memory runs (BENCH_ONLY=storm). */
const ONLY = process.env.BENCH_ONLY ?? '';

interface Stats {
  cpuMicros: number;
  user: number;
  system: number;
  rss: number;
  heapUsed: number;
  queries: number;
}
interface Opened {
  count: number;
  failed: number;
  synced: number;
  ms: number;
  messagesPerClient: number;
  bytesPerClient: number;
}

const config = loadConfig();
const svc = await (async () => {
  await recreateDatabase(config.databaseUrl);
  await migrate(config);
  return createServices(config, createLogger(config, 'bench'));
})();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const { after: station } = await createStation(
  svc.db,
  svc.invalidation,
  { slug: `reconnect-${Date.now().toString(36)}`, name: 'Bench FM', timezone: 'Europe/Berlin' },
  new Date(),
);
const write = (kind: 'schedule' | 'on-air' | 'now-playing' | 'content', entry: string, data: unknown) =>
  inTransaction(svc.db, (tx) => upsertFeedRow(tx, svc.bus, { stationId: station.id, kind, entry, data }));
const broadcasts = Array.from({ length: 12 }, (_, i) => ({
  id: randomUUID(),
  title: `Programme ${i}`,
  startsAt: new Date(Date.now() + i * 3600_000).toISOString(),
  endsAt: new Date(Date.now() + (i + 1) * 3600_000).toISOString(),
  presenters: [{ title: `Presenter ${i}` }],
}));
await write('schedule', 'current', { contractVersion: 1, timezone: 'Europe/Berlin', broadcasts, truncated: false });
await write('on-air', 'current', { broadcast: broadcasts[0], position: null, followed: null });
const track = (i: number) => ({
  contractVersion: 1,
  track: { artist: `Artist ${i}`, title: `Title ${i}`, album: 'Bench Sessions', durationSeconds: 215, isPlaying: true },
  freshness: { status: 'fresh', ageSeconds: 0, thresholdSeconds: 600 },
});
await write('now-playing', 'current', track(0));
for (let i = 0; i < CONTENT; i++) {
  const id = randomUUID();
  await write('content', id, { id, type: 'news', title: `Story ${i}`, body: 'Lorem ipsum dolor sit amet. '.repeat(70) });
}

const query = `?channels[]=${encodeURIComponent(stationChannel(station.id))}`;

async function storm() {
  const gateway = startChild('./gateway.ts', []);
  const fleet = startChild('../reconnect/fleet.ts', []);
  try {
    const port = await gateway.request<number>({ type: 'port' });
    const url = `ws://127.0.0.1:${port}/v1/realtime${query}`;
    const first = await fleet.request<Opened>({ type: 'open', url, count: CLIENTS, useCursor: false, inFlight: IN_FLIGHT });
    if (first.synced !== CLIENTS) throw new Error(`only ${first.synced} of ${CLIENTS} clients synced: ${JSON.stringify(first)}`);
    const phase = async (name: string, useCursor: boolean, meanwhile: () => Promise<void>, target = gateway, targetUrl = url) => {
      await fleet.request({ type: 'drop' });
      await sleep(1000); // the gateway has seen every close (its state of the station lingers 2 s)
      await meanwhile();
      const before = await target.request<Stats>({ type: 'stats', collect: false });
      const opened = await fleet.request<Opened>({ type: 'open', url: targetUrl, count: CLIENTS, useCursor, inFlight: IN_FLIGHT });
      const after = await target.request<Stats>({ type: 'stats', collect: false });
      return figures(name, opened, before, after, after.queries - before.queries);
    };
    const a = await phase('(a) no cursor', false, async () => {});
    const b = await phase(`(b) cursor, ${CHANGES} changes meanwhile`, true, async () => {
      for (let i = 1; i <= CHANGES; i++) await write('now-playing', 'current', track(i));
    });
    // (c) The same clients move to a node that has never served the station (their node restarted).
    const other = startChild('./gateway.ts', []);
    try {
      const otherUrl = `ws://127.0.0.1:${await other.request<number>({ type: 'port' })}/v1/realtime${query}`;
      const c = await phase(
        `(c) cursor, ${CHANGES} changes meanwhile, to a cold node`,
        true,
        async () => {
          for (let i = CHANGES + 1; i <= 2 * CHANGES; i++) await write('now-playing', 'current', track(i));
        },
        other,
        otherUrl,
      );
      return [a, b, c];
    } finally {
      await other.stop();
    }
  } finally {
    await fleet.request({ type: 'close' }).catch(() => {});
    await fleet.stop();
    await gateway.stop();
  }
}

/** A storm's figures: the fleet's view, and the server's CPU (total, user, system) and queries per reconnect. */
function figures(phase: string, opened: Opened, before: Stats, after: Stats, queries: number) {
  const cpuMs = (after.cpuMicros - before.cpuMicros) / 1000;
  return {
    phase,
    clients: CLIENTS,
    synced: opened.synced,
    failed: opened.failed,
    msUntilAllSynced: opened.ms,
    messagesPerClient: opened.messagesPerClient,
    bytesPerClient: opened.bytesPerClient,
    gatewayCpuMs: Math.round(cpuMs),
    gatewayCpuMicrosPerReconnect: Math.round((cpuMs * 1000) / CLIENTS),
    userMicrosPerReconnect: Math.round((after.user - before.user) / CLIENTS),
    systemMicrosPerReconnect: Math.round((after.system - before.system) / CLIENTS),
    postgresQueries: queries,
    postgresQueriesPerReconnect: queries / CLIENTS,
  };
}

/**
 * The floor: the same storm on a bare uWS app. `greet`: it accepts, upgrades natively (no JavaScript)
 * and sends one small message. `resume:<bytes>`: an upgrade handler reads the URL (what any feed
 * addressed by its URL does) and two messages of (b)'s size are sent, in one write like (b)'s.
 */
async function bareStorm(phase: string, greet: string) {
  const bare = startChild('./bare.ts', ['waveline:bench:bare:reconnect', String(config.gateway.maxBackpressureBytes), greet]);
  const fleet = startChild('../reconnect/fleet.ts', []);
  try {
    const port = await bare.request<number>({ type: 'port' });
    const url = `ws://127.0.0.1:${port}/bare${query}`;
    await fleet.request<Opened>({ type: 'open', url, count: CLIENTS, useCursor: false, inFlight: IN_FLIGHT });
    await fleet.request({ type: 'drop' });
    await sleep(1000);
    const before = await bare.request<Stats>({ type: 'stats', collect: false });
    const opened = await fleet.request<Opened>({ type: 'open', url, count: CLIENTS, useCursor: false, inFlight: IN_FLIGHT });
    const after = await bare.request<Stats>({ type: 'stats', collect: false });
    return figures(phase, opened, before, after, 0);
  } finally {
    await fleet.request({ type: 'close' }).catch(() => {});
    await fleet.stop();
    await bare.stop();
  }
}

async function idleMemory(transport: 'ws' | 'sse') {
  const gateway = startChild('./gateway.ts', []);
  const fleet = startChild('../reconnect/fleet.ts', []);
  try {
    const port = await gateway.request<number>({ type: 'port' });
    const url = transport === 'ws' ? `ws://127.0.0.1:${port}/v1/realtime${query}` : `http://127.0.0.1:${port}/v1/realtime/sse${query}`;
    // One connection first, so the station's state is loaded before the baseline.
    const probe = startChild('../reconnect/fleet.ts', []);
    await probe.request<Opened>({ type: 'open', url, count: 1, useCursor: false });
    await sleep(500);
    const base = await gateway.request<Stats>({ type: 'stats', collect: true });
    const opened = await fleet.request<Opened>({ type: 'open', url, count: IDLE - 1, useCursor: false, inFlight: IN_FLIGHT });
    await sleep(2000);
    const idle = await gateway.request<Stats>({ type: 'stats', collect: true });
    await probe.request({ type: 'close' }).catch(() => {});
    await probe.stop();
    return {
      transport,
      connections: opened.synced + 1,
      rssPerIdleConnectionBytes: Math.round((idle.rss - base.rss) / opened.synced),
      heapPerIdleConnectionBytes: Math.round((idle.heapUsed - base.heapUsed) / opened.synced),
    };
  } finally {
    await fleet.request({ type: 'close' }).catch(() => {});
    await fleet.stop();
    await gateway.stop();
  }
}

const started = performance.now();
const [a, b, c] = ONLY === 'memory' ? [] : await storm();
const floor = ONLY === 'memory' ? undefined : await bareStorm('(floor) bare uWS, one message', 'greet');
const floorResume =
  ONLY === 'memory' || !b
    ? undefined
    : await bareStorm("(floor') bare uWS, reads the URL, (b)'s two messages", `resume:${b.bytesPerClient}`);
for (const result of [a, b, c, floor, floorResume]) if (result) console.log(JSON.stringify(result));
const memory = [];
for (const transport of ONLY === 'storm' ? [] : (['ws', 'sse'] as const)) {
  const result = await idleMemory(transport);
  console.log(JSON.stringify(result));
  memory.push(result);
}

console.log(`\nbench:reconnect ${new Date().toISOString()} (${Math.round((performance.now() - started) / 1000)} s)\n`);
console.log(
  '| phase | clients synced | time until all synced | messages (bytes) per client | gateway CPU | CPU per reconnect (user + system) | Postgres queries (per reconnect) |',
);
console.log('|---|---|---|---|---|---|---|');
for (const r of a && b && c && floor && floorResume ? [a, b, c, floor, floorResume] : [])
  console.log(
    `| ${r.phase} | ${r.synced}/${r.clients} | ${r.msUntilAllSynced} ms | ${r.messagesPerClient} (${r.bytesPerClient} B) | ${r.gatewayCpuMs} ms | ${r.gatewayCpuMicrosPerReconnect} µs (${r.userMicrosPerReconnect} + ${r.systemMicrosPerReconnect}) | ${r.postgresQueries} (${r.postgresQueriesPerReconnect}) |`,
  );
if (a && b && floor && floorResume) {
  const above = (base: typeof floor) => ((b.gatewayCpuMs - base.gatewayCpuMs) / (a.gatewayCpuMs - base.gatewayCpuMs)).toFixed(2);
  console.log(
    `(b) / (a) gateway CPU: ${(b.gatewayCpuMs / a.gatewayCpuMs).toFixed(2)} (target ≤ 0.20); floor / (a): ${(floor.gatewayCpuMs / a.gatewayCpuMs).toFixed(2)}, floor' / (a): ${(floorResume.gatewayCpuMs / a.gatewayCpuMs).toFixed(2)}; above the floor: ${above(floor)}, above floor': ${above(floorResume)}\n`,
  );
}
console.log('| transport | idle connections | RSS per idle connection | heap per idle connection |');
console.log('|---|---|---|---|');
for (const m of memory)
  console.log(`| ${m.transport} | ${m.connections} | ${m.rssPerIdleConnectionBytes} B | ${m.heapPerIdleConnectionBytes} B |`);
await svc.close();
