// npm run bench:webhooks — webhook deliveries from real writes to local receivers.
//
// Starts `waveline web` and `waveline worker` as separate processes on a database of its own
// (BENCH_DATABASE_URL, recreated) and a Redis index of its own (BENCH_REDIS_URL, flushed), with
// WEBHOOKS_ALLOW_INSECURE=1 (the receivers are local http:// servers in this process). BENCH_STATIONS
// stations (rundown following off) each have a webhook for `now-playing.changed`; every ingest with a
// new title is one event. Measured, with 1 worker and then 2:
//   1. paced: BENCH_RATE ingests/s (default 200) for BENCH_DURATION_SECONDS: commit → receiver latency
//      (from the ingest's answer, which follows its commit, to the receiver's request; and from the
//      ingest's request, an upper bound), and deliveries/s;
//   2. burst: BENCH_BURST ingests as fast as 32 connections allow: deliveries/s until the last arrives.
// Isolation (1 worker, between the two): the same paced load to a receiver answering after 100 ms, alone, then
// beside a second webhook per station whose receiver never answers (each attempt times out at 5 s).
// The machine is shared (2 cores): figures are noisy; compare within one run.
import { performance } from 'node:perf_hooks';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/roles/migrate.ts';
import { freePort, recreateDatabase, startRole, stopRole, summary, waitUntilReady } from './support.ts';

const env = process.env;
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_webhooks';
const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const STATIONS = Number(env.BENCH_STATIONS ?? 20);
const RATE = Number(env.BENCH_RATE ?? 200);
const SECONDS = Number(env.BENCH_DURATION_SECONDS ?? 15);
const BURST = Number(env.BENCH_BURST ?? 4000);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const TARGET = { p99Ms: 250, rate: 200 };

const roleEnv = (port: number): Record<string, string> => ({
  NODE_ENV: 'production',
  DATABASE_URL,
  REDIS_URL,
  PORT: String(port),
  WAVELINE_ADMIN_TOKEN: ADMIN_TOKEN,
  WAVELINE_SECRET: 'bench-secret-0123456789abcdef',
  WEBHOOKS_ALLOW_INSECURE: '1',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_INGEST_PER_MINUTE: '0',
});

interface Receiver {
  url: string;
  /** Arrival time (performance.now()) of each title. */
  arrivals: Map<string, number>;
  server: Server;
}

async function startReceiver(answer: 'now' | 'after100ms' | 'never'): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const title = (JSON.parse(Buffer.concat(chunks).toString()) as { data?: { track?: { title?: string } } }).data?.track?.title;
      if (title && !arrivals.has(title)) arrivals.set(title, at);
      if (answer === 'now') res.end('ok');
      else if (answer === 'after100ms') setTimeout(() => res.end('ok'), 100);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrivals, server };
}

async function admin(baseUrl: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${baseUrl}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

interface BenchStation {
  id: string;
  slug: string;
  token: string;
  hooks: string[];
}

interface Sent {
  title: string;
  sentAt: number;
  answeredAt: number;
}

let counter = 0;
async function ingest(pool: Pool, station: BenchStation): Promise<Sent | null> {
  const title = `Song ${counter++} ${Math.random().toString(36).slice(2, 8)}`;
  const sentAt = performance.now();
  const res = await pool.request({
    method: 'POST',
    path: `/api/v1/integrations/playback?stationSlug=${station.slug}`,
    headers: { authorization: `Bearer ${station.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ artist: 'Bench', title }),
  });
  await res.body.text();
  if (res.statusCode !== 200) return null;
  return { title, sentAt, answeredAt: performance.now() };
}

async function paced(pool: Pool, stations: BenchStation[], rate: number, seconds: number): Promise<Sent[]> {
  const total = rate * seconds;
  const start = performance.now();
  const pending: Array<Promise<Sent | null>> = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(ingest(pool, stations[i % stations.length]));
  }
  return (await Promise.all(pending)).filter((s): s is Sent => s !== null);
}

async function burst(pool: Pool, stations: BenchStation[], count: number): Promise<Sent[]> {
  const sent: Sent[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count) {
        const s = await ingest(pool, stations[next++ % stations.length]);
        if (s) sent.push(s);
      }
    }),
  );
  return sent;
}

async function arrivedAll(receiver: Receiver, sent: Sent[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (sent.some((s) => !receiver.arrivals.has(s.title)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

function latency(receiver: Receiver, sent: Sent[]) {
  const fromCommit: number[] = [];
  const fromRequest: number[] = [];
  let lost = 0;
  let last = 0;
  for (const s of sent) {
    const at = receiver.arrivals.get(s.title);
    if (at === undefined) {
      lost++;
      continue;
    }
    fromCommit.push(Math.max(0, at - s.answeredAt));
    fromRequest.push(at - s.sentAt);
    last = Math.max(last, at);
  }
  const first = Math.min(...sent.map((s) => s.sentAt));
  // `noEvent`: ingests whose now-playing row did not change (a concurrent one of the same station showed a later moment).
  return {
    fromCommit: summary(fromCommit),
    fromRequest: summary(fromRequest),
    noEvent: lost,
    deliveriesPerSecond: Math.round((sent.length - lost) / ((last - first) / 1000)),
  };
}

async function pointHooks(baseUrl: string, stations: BenchStation[], urls: string[]): Promise<void> {
  for (const station of stations) {
    for (const id of station.hooks) await admin(baseUrl, 'DELETE', `/stations/${station.id}/webhooks/${id}`);
    station.hooks = [];
    for (const url of urls)
      station.hooks.push((await admin(baseUrl, 'POST', `/stations/${station.id}/webhooks`, { url, events: ['now-playing.changed'] })).id);
  }
  // Web processes hear the change through Redis at once; leave them a moment all the same.
  await new Promise((r) => setTimeout(r, 500));
}

async function main(): Promise<void> {
  await recreateDatabase(DATABASE_URL);
  await migrate(loadConfig({ DATABASE_URL, REDIS_URL }));
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  const fast = await startReceiver('now');
  const slow = await startReceiver('after100ms');
  const dead = await startReceiver('never');
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const web = startRole('web', roleEnv(port));
  const workers = [startRole('worker', roleEnv(0))];
  const pool = new Pool(baseUrl, { connections: 64 });
  const results: Record<string, unknown> = {
    machine: 'shared 2-core VM: figures are noisy',
    stations: STATIONS,
    rate: RATE,
    seconds: SECONDS,
  };
  try {
    await waitUntilReady(baseUrl);
    const stations: BenchStation[] = [];
    for (let i = 0; i < STATIONS; i++) {
      const station = await admin(baseUrl, 'POST', '/stations', {
        slug: `bench-wh-${i}-${Date.now().toString(36)}`,
        name: `Bench ${i}`,
        timezone: 'UTC',
        rundownFollowing: false,
      });
      const { token } = await admin(baseUrl, 'POST', `/stations/${station.id}/credentials`, { scopes: ['ingest:write'] });
      stations.push({ id: station.id, slug: station.slug, token, hooks: [] });
    }
    await pointHooks(baseUrl, stations, [fast.url]);
    await new Promise((r) => setTimeout(r, 2000)); // the worker is up
    await paced(pool, stations, 50, 2); // warm-up
    const phase = async (count: number) => {
      const p = await paced(pool, stations, RATE, SECONDS);
      await arrivedAll(fast, p);
      const b = await burst(pool, stations, BURST);
      await arrivedAll(fast, b);
      const key = `${count} worker${count > 1 ? 's' : ''}`;
      results[key] = { paced: latency(fast, p), burst: { events: b.length, ...latency(fast, b) } };
      process.stderr.write(`bench: ${key}: ${JSON.stringify(results[key])}\n`);
    };
    await phase(1);
    // Isolation, with the one worker: a 100 ms receiver alone, then beside a dead receiver per station.
    await pointHooks(baseUrl, stations, [slow.url]);
    const alone = await paced(pool, stations, RATE, SECONDS);
    await arrivedAll(slow, alone);
    // One dead endpoint (one station's second webhook), then one per station.
    await pointHooks(baseUrl, stations.slice(0, 1), [slow.url, dead.url]);
    const besideOne = await paced(pool, stations, RATE, SECONDS);
    await arrivedAll(slow, besideOne);
    await pointHooks(baseUrl, stations, [slow.url, dead.url]);
    const beside = await paced(pool, stations, RATE, SECONDS);
    await arrivedAll(slow, beside);
    results['100 ms receiver (1 worker)'] = {
      alone: latency(slow, alone).fromCommit,
      besideOneDeadEndpoint: latency(slow, besideOne).fromCommit,
      besideADeadEndpointPerStation: latency(slow, beside).fromCommit,
      deadReceiverRequests: dead.arrivals.size,
    };
    process.stderr.write(`bench: isolation: ${JSON.stringify(results['100 ms receiver (1 worker)'])}\n`);
    // Throughput with a second worker (the dead endpoints are gone again).
    await pointHooks(baseUrl, stations, [fast.url]);
    workers.push(startRole('worker', roleEnv(0)));
    await new Promise((r) => setTimeout(r, 3000));
    await phase(2);
    results.target = `p99 commit→delivery ≤ ${TARGET.p99Ms} ms at ${TARGET.rate} events/s`;
    process.stdout.write(JSON.stringify(results, null, 2) + '\n');
  } finally {
    await pool.close();
    for (const worker of workers) await stopRole(worker);
    await stopRole(web);
    for (const r of [fast, slow, dead]) {
      r.server.closeAllConnections();
      r.server.close();
    }
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
