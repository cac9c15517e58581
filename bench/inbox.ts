// npm run bench:inbox — the listener inbox under a song change and a busy phone-in (docs/inbox.md).
//
// Starts BENCH_WEBS (default 2) `waveline web` processes on a database of its own (BENCH_DATABASE_URL,
// recreated) and a Redis index of its own (BENCH_REDIS_URL, flushed); the load goes to them in turn, as
// behind a load balancer. One station with the inbox on (perClientPerHour 60); TRUSTED_PROXY_HOPS=1, and
// each message says its own address in X-Forwarded-For (the per-address limit is per listener, not per
// load generator). Measured:
//   1. cached now-playing reads (autocannon, a listener credential, BENCH_READ_RATE req/s over 10
//      connections) for BURST seconds with nothing else running;
//   2. the vote burst: an ingest changes the song, then BENCH_VOTERS clients (default 10 000) vote within
//      BENCH_BURST_SECONDS (5) — PUT …/inbox/likes, 1 / -1 / 0, a quarter of them two or three times
//      (one after the other, each waiting for the answer to the previous) — paced open loop, while the
//      same reads as in 1 run. Every answer must be 200 on the new play; the counts (a last re-vote of
//      the same value, and the play log) must equal the distinct clients' last non-zero votes, computed
//      here. PUT p99 and the reads' p99 ÷ 1's p99;
//   3. BENCH_RATE messages/s (200) for BENCH_DURATION_SECONDS (30), 5 % of them requests of a track just
//      played (refused: 409 recently-played), the rest messages, dedications and requests of new tracks;
//      a reader on the studio stream (web 1, root key) counts ids: every 202 once in the studio list and
//      once on the stream, nothing else; delivery = stream arrival − the POST's answer (0 if first).
// Both Waveline and the baselines are warmed up first with the burst itself, twice, each after a song
// change (BENCH_WARMUP_ROUNDS, below).
// Baseline, in the same run (after Waveline's phases, on the same machine):
//   - votes: BENCH_WEBS bare node:http processes upserting one row each (bench/support/voteBaseline.ts),
//     the same burst, the same client; beside them a bare node:http server replaying the now-playing
//     answer's bytes, read quietly and during the bare burst: the floor of both vote and read targets;
//     then the same burst again with the replayed answer read from the first bare upsert server itself
//     (reads in the process taking the votes, as Waveline's web takes both): the read ratio's own floor;
//   - messages: bench/support/ingestBaseline.ts (one INSERT + one PUBLISH per request) at BENCH_RATE for
//     10 s, with a Redis subscriber as the reader: the floor of write-then-deliver.
// CPU per vote and per message (web processes, all of Postgres, Redis) from /proc. The votes and messages
// are generated in this process, the reads (autocannon) in one of their own (bench/support/readLoad.ts),
// all on the same two cores: a pause of the vote generator is not counted as the reads' latency.
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import {
  BENCH_ENV,
  cpuMs,
  cpuMsOf,
  freePort,
  recreateDatabase,
  startBare,
  startRole,
  stopRole,
  summary,
  waitUntilReady,
} from './support.ts';

const env = process.env;
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_inbox';
const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/5';
const WEBS = Number(env.BENCH_WEBS ?? 2);
const VOTERS = Number(env.BENCH_VOTERS ?? 10_000);
const BURST_SECONDS = Number(env.BENCH_BURST_SECONDS ?? 5);
const RATE = Number(env.BENCH_RATE ?? 200);
const SECONDS = Number(env.BENCH_DURATION_SECONDS ?? 30);
const READ_RATE = Number(env.BENCH_READ_RATE ?? 200);
// The warm-up before anything is measured, the same for Waveline and the bare servers: BENCH_WARMUP_ROUNDS
// (default 2) song changes, each followed by the burst to come (BENCH_WARMUP_VOTERS clients, default
// BENCH_VOTERS, over BENCH_WARMUP_SECONDS, default BENCH_BURST_SECONDS) — a web process of a station that
// has been through song changes before. With one short warm-up burst, V8 was still compiling the vote path
// (and re-compiling it as the request mix changed) during the measured burst: a sixth of a web process's
// CPU, on background threads taking the same two cores.
const WARMUP_ROUNDS = Number(env.BENCH_WARMUP_ROUNDS ?? 2);
const WARMUP_VOTERS = Math.min(Number(env.BENCH_WARMUP_VOTERS ?? VOTERS), VOTERS);
const WARMUP_SECONDS = Number(env.BENCH_WARMUP_SECONDS ?? BURST_SECONDS);
const BASELINE_MESSAGE_SECONDS = Math.min(10, SECONDS);
const ADMIN_TOKEN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const TARGETS = { voteP99Ms: 50, readRatio: 1.2, deliveryP99Ms: 2000 };

const roleEnv = (port: number): Record<string, string> => ({
  ...BENCH_ENV,
  DATABASE_URL,
  REDIS_URL,
  PORT: String(port),
  LOG_LEVEL: 'warn',
  TRUSTED_PROXY_HOPS: '1',
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const verdict = (value: number, target: number) => (value <= target ? 'PASS' : 'over');

async function call(base: string, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** CPU (ms) used so far by the given processes, all of Postgres and Redis. */
function cpuSnapshot(pids: number[]): { serve: number; postgres: number; redis: number; bench: number } {
  return {
    serve: pids.reduce((n, pid) => n + cpuMs(pid), 0),
    postgres: cpuMsOf('postgres'),
    redis: cpuMsOf('redis-server'),
    bench: cpuMs(process.pid),
  };
}
function cpuPer(before: ReturnType<typeof cpuSnapshot>, after: ReturnType<typeof cpuSnapshot>, count: number) {
  const per = (key: keyof typeof before) => round((after[key] - before[key]) / Math.max(1, count), 3);
  const out = { server: per('serve'), postgres: per('postgres'), redis: per('redis') };
  // The load generator (this process) is reported apart: it is not the service's cost.
  return { ...out, total: round(out.server + out.postgres + out.redis, 3), loadGenerator: per('bench') };
}

// ---- votes ----

interface Vote {
  client: number;
  value: 1 | -1 | 0;
  due: number;
}

/** Every client votes once; a quarter two or three times. Values: 1 (60 %), -1 (25 %), 0 (15 %). */
function planVotes(clients: number, seconds: number): { votes: Vote[]; clientIds: string[] } {
  const pick = (): 1 | -1 | 0 => {
    const r = Math.random();
    return r < 0.6 ? 1 : r < 0.85 ? -1 : 0;
  };
  const votes: Vote[] = [];
  const span = seconds * 1000;
  for (let client = 0; client < clients; client++) {
    const times = Math.random() < 0.25 ? 2 + Math.floor(Math.random() * 2) : 1;
    const first = Math.random() * span * 0.7;
    for (let k = 0; k < times; k++) votes.push({ client, value: pick(), due: k === 0 ? first : first + ((span - first) * k) / times });
  }
  votes.sort((a, b) => a.due - b.due);
  return { votes, clientIds: Array.from({ length: clients }, () => randomUUID()) };
}

/** The distinct clients' last non-zero votes, in the order each client's votes were sent. */
function expectedCounts(votes: Vote[]): { likes: number; dislikes: number } {
  const last = new Map<number, number>();
  for (const v of votes) last.set(v.client, v.value);
  return lastNonZero(last);
}

function lastNonZero(last: Map<number, number>): { likes: number; dislikes: number } {
  let likes = 0;
  let dislikes = 0;
  for (const value of last.values()) {
    if (value === 1) likes++;
    else if (value === -1) dislikes++;
  }
  return { likes, dislikes };
}

interface BurstResult {
  latencies: number[];
  failures: Record<string, number>;
  playIds: Set<string>;
  elapsedMs: number;
  last: Map<number, number>;
}

/** Sends the planned votes on schedule (a client's next vote waits for its previous answer). */
async function burst(pools: Pool[], path: (i: number) => string, headers: Record<string, string>, plan: ReturnType<typeof planVotes>) {
  const result: BurstResult = { latencies: [], failures: {}, playIds: new Set(), elapsedMs: 0, last: new Map() };
  const chains = new Map<number, Promise<void>>();
  const start = performance.now();
  const all: Array<Promise<void>> = [];
  let i = 0;
  for (const v of plan.votes) {
    const wait = start + v.due - performance.now();
    if (wait > 1) await sleep(wait);
    const n = i++;
    const previous = chains.get(v.client) ?? Promise.resolve();
    const next = previous.then(async () => {
      const sent = performance.now();
      try {
        const res = await pools[n % pools.length].request({
          method: 'PUT',
          path: path(n),
          headers,
          body: JSON.stringify({ clientId: plan.clientIds[v.client], value: v.value }),
        });
        const text = await res.body.text();
        result.latencies.push(performance.now() - sent);
        if (res.statusCode !== 200) {
          result.failures[res.statusCode] = (result.failures[res.statusCode] ?? 0) + 1;
          return;
        }
        const answer = JSON.parse(text) as { playId?: string };
        if (answer.playId) result.playIds.add(answer.playId);
        result.last.set(v.client, v.value);
      } catch (err) {
        const key = (err as Error).message;
        result.failures[key] = (result.failures[key] ?? 0) + 1;
      }
    });
    chains.set(v.client, next);
    all.push(next);
  }
  await Promise.all(all);
  result.elapsedMs = performance.now() - start;
  return result;
}

/**
 * Cached reads at READ_RATE for `seconds`, from a process of their own (bench/support/readLoad.ts, kept
 * for the run, so a pause of this one, which generates the votes, is not counted as their latency): p99
 * and errors, and the slowest five (when each was answered, in ms from the start, and its latency), to
 * tell a stall at one moment from a slower tail throughout.
 */
type ReadResult = { requests: number; p50: number; p99: number; max: number; non2xx: number; errors: number; slowest: string[] };
let readerProcess: Promise<{ child: ChildProcess; next(): Promise<unknown> }> | null = null;
function reader() {
  readerProcess ??= (async () => {
    const child = fork(new URL('./support/readLoad.ts', import.meta.url).pathname, [], { stdio: 'inherit' });
    const messages: unknown[] = [];
    let heard: (() => void) | null = null;
    child.on('message', (m) => {
      messages.push(m);
      heard?.();
    });
    const next = async () => {
      while (messages.length === 0) await new Promise<void>((ok) => (heard = ok));
      return messages.shift();
    };
    await next(); // ready
    return { child, next };
  })();
  return readerProcess;
}

async function reads(url: string, headers: Record<string, string>, seconds: number): Promise<ReadResult> {
  const { child, next } = await reader();
  child.send({ url, headers, seconds, rate: READ_RATE });
  const result = (await next()) as ReadResult & { error?: string };
  if (result.error) throw new Error(`read load: ${result.error}`);
  return result;
}

// ---- messages ----

interface StreamReader {
  arrivals: Map<string, number[]>;
  events: number;
  close(): void;
}

/** Reads the studio stream and keeps each message id's arrival times (performance.now()). */
async function readStream(base: string, stationId: string): Promise<StreamReader> {
  const reader: StreamReader = { arrivals: new Map(), events: 0, close: () => undefined };
  await new Promise<void>((ready, fail) => {
    const req = httpRequest(`${base}/admin/v1/stations/${stationId}/inbox/stream`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'text/event-stream' },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) return fail(new Error(`stream: ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split('\n');
          const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
          if (event === 'ready') ready();
          if (event !== 'message') continue;
          const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
          const id = (JSON.parse(data ?? '{}') as { id: string }).id;
          reader.events++;
          const list = reader.arrivals.get(id) ?? [];
          list.push(at);
          reader.arrivals.set(id, list);
        }
      });
    });
    req.on('error', fail);
    req.end();
    reader.close = () => req.destroy();
  });
  return reader;
}

interface Sent {
  id: string | null;
  status: number;
  sentAt: number;
  answeredAt: number;
  refusedByPolicy: boolean;
}

/** BENCH_RATE messages a second, paced; `refuse` of them requests of `playedTrack`. */
async function sendMessages(pools: Pool[], slug: string, token: string, playedTrack: { artist: string; title: string }, seconds: number) {
  const total = Math.round(RATE * seconds);
  const start = performance.now();
  const pending: Array<Promise<Sent>> = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / RATE - performance.now();
    if (wait > 1) await sleep(wait);
    const roll = i % 20;
    const body =
      roll === 0
        ? { kind: 'request', track: playedTrack, text: `Play it again ${i}` }
        : roll % 3 === 0
          ? { kind: 'request', track: { artist: `Artist ${i}`, title: `Wish ${i}` } }
          : roll % 3 === 1
            ? { kind: 'dedication', text: `For my sister, number ${i}`, name: 'Mia' }
            : { kind: 'message', text: `Hello studio, greetings number ${i}`, location: 'Leipzig' };
    const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    pending.push(
      (async (): Promise<Sent> => {
        const sentAt = performance.now();
        const res = await pools[i % pools.length].request({
          method: 'POST',
          path: `/api/v1/stations/${slug}/inbox/messages`,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-forwarded-for': address },
          body: JSON.stringify({ clientId: randomUUID(), ...body }),
        });
        const text = await res.body.text();
        const answeredAt = performance.now();
        const parsed = JSON.parse(text) as { id?: string; error?: { reason?: string } };
        return {
          id: res.statusCode === 202 ? (parsed.id ?? null) : null,
          status: res.statusCode,
          sentAt,
          answeredAt,
          refusedByPolicy: res.statusCode === 409 && parsed.error?.reason === 'recently-played',
        };
      })(),
    );
  }
  return Promise.all(pending);
}

async function forkReady(script: string, args: string[]): Promise<ChildProcess> {
  const child = fork(new URL(script, import.meta.url).pathname, args, { stdio: 'inherit' });
  await new Promise<void>((ok) => child.once('message', () => ok()));
  return child;
}

async function main(): Promise<void> {
  const loads: number[] = [loadavg()[0]];
  const startedAt = new Date();
  await recreateDatabase(DATABASE_URL);
  const migrate = startRole('migrate', roleEnv(0));
  await new Promise((ok) => migrate.on('exit', ok));
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();

  const ports = await Promise.all(Array.from({ length: WEBS }, () => freePort()));
  const webs = ports.map((port) => startRole('web', roleEnv(port)));
  const bases = ports.map((port) => `http://127.0.0.1:${port}`);
  const pools = bases.map((base) => new Pool(base, { connections: 128, pipelining: 1 }));
  const cleanups: Array<() => Promise<void> | void> = [];
  const anomalies: string[] = [];
  try {
    await Promise.all(bases.map((base) => waitUntilReady(base)));
    const base = bases[0];
    const station = await call(base, 'POST', '/admin/v1/stations', ADMIN_TOKEN, {
      slug: `bench-inbox-${Date.now().toString(36)}`,
      name: 'Bench Inbox FM',
      timezone: 'Europe/Berlin',
      rundownFollowing: false,
      modules: { inbox: true },
      inbox: { perClientPerHour: 60 },
    });
    const { token } = await call(base, 'POST', `/admin/v1/stations/${station.id}/credentials`, ADMIN_TOKEN, {
      scopes: ['listener:read', 'inbox:write'],
    });
    const { token: ingestToken } = await call(base, 'POST', `/admin/v1/stations/${station.id}/credentials`, ADMIN_TOKEN, {
      scopes: ['ingest:write'],
    });
    // An ingest answered otherwise than 200 is retried (the same event) up to twice, and reported.
    const play = async (artist: string, title: string) => {
      const body = JSON.stringify({ eventId: randomUUID(), observedAt: Date.now(), artist, title, isPlaying: true, durationSeconds: 240 });
      for (let attempt = 1; ; attempt++) {
        const res = await fetch(`${base}/api/v1/integrations/playback?stationSlug=${station.slug}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ingestToken}`, 'content-type': 'application/json' },
          body,
        });
        if (res.status === 200) return;
        const problem = `ingest of "${title}" answered ${res.status} ${await res.text()}`;
        anomalies.push(problem);
        process.stderr.write(`bench: ${problem}\n`);
        if (attempt === 3) throw new Error(problem);
        await sleep(500);
      }
    };
    const listener = { authorization: `Bearer ${token}` };
    const voteHeaders = { ...listener, 'content-type': 'application/json' };
    const likesPath = `/api/v1/stations/${station.slug}/inbox/likes`;
    const nowPlayingUrl = `${base}/api/v1/stations/${station.slug}/now-playing`;

    // Warm-up: a song on air, votes and reads on every process (JIT, pools, the read cache).
    await play('Warm Up', 'Song Zero');
    await sleep(200);
    process.stderr.write(`bench: ${WEBS} web processes ready; warming up\n`);
    for (let round = 1; round <= WARMUP_ROUNDS; round++) {
      await play('Warm-up Artist', `Warm-up ${round} ${randomUUID().slice(0, 8)}`);
      await burst(pools, () => likesPath, voteHeaders, planVotes(WARMUP_VOTERS, WARMUP_SECONDS));
    }
    await reads(nowPlayingUrl, listener, 2);

    // 1. The reads alone.
    process.stderr.write(`bench: now-playing reads alone, ${READ_RATE}/s for ${BURST_SECONDS} s\n`);
    const quietReads = await reads(nowPlayingUrl, listener, BURST_SECONDS);
    loads.push(loadavg()[0]);

    // 2. The song changes; the burst, beside the same reads.
    const song = { artist: 'Bench Artist', title: `Song Change ${randomUUID().slice(0, 8)}` };
    await play(song.artist, song.title);
    const plan = planVotes(VOTERS, BURST_SECONDS);
    process.stderr.write(`bench: vote burst, ${plan.votes.length} votes of ${VOTERS} clients in ${BURST_SECONDS} s, beside the reads\n`);
    const cpuBefore = cpuSnapshot(webs.map((w) => w.pid!));
    const [votes, burstReads] = await Promise.all([
      burst(pools, () => likesPath, voteHeaders, plan),
      reads(nowPlayingUrl, listener, BURST_SECONDS),
    ]);
    const voteCpu = cpuPer(cpuBefore, cpuSnapshot(webs.map((w) => w.pid!)), plan.votes.length);
    loads.push(loadavg()[0]);
    // Every vote answered 200 is stored; one answered otherwise (a 503 when the machine is saturated:
    // no database connection within 1.5 s, before anything is written) is not: the counts must equal the
    // last answered non-zero vote of each client, which is the plan's when every vote was answered.
    const expected = lastNonZero(votes.last);
    const planned = expectedCounts(plan.votes);
    // The counts now: one client re-votes its last non-zero value (a vote that changes nothing).
    const [probeClient, probeValue] = [...votes.last.entries()].find(([, value]) => value !== 0)!;
    const probe = (await call(base, 'PUT', likesPath, token, { clientId: plan.clientIds[probeClient], value: probeValue })) as {
      playId: string;
      likes: number;
      dislikes: number;
    };
    const range = `from=${encodeURIComponent(new Date(startedAt.getTime() - 3600_000).toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`;
    const log = (await call(base, 'GET', `/admin/v1/stations/${station.id}/plays?${range}`, ADMIN_TOKEN)) as {
      plays: Array<{ title: string; likes: number; dislikes: number }>;
    };
    const logged = log.plays.find((p) => p.title === song.title);
    const voteLatency = summary(votes.latencies);
    const exact =
      Object.keys(votes.failures).every((status) => status === '503') &&
      votes.playIds.size === 1 &&
      probe.likes === expected.likes &&
      probe.dislikes === expected.dislikes &&
      logged?.likes === expected.likes &&
      logged?.dislikes === expected.dislikes;

    // 3. Messages, with a reader on the studio stream.
    const reader = await readStream(bases[WEBS > 1 ? 1 : 0], station.id);
    cleanups.push(() => reader.close());
    process.stderr.write(`bench: messages, ${RATE}/s for ${SECONDS} s (5 % refused requests); stream reader on web ${WEBS > 1 ? 2 : 1}\n`);
    const msgCpuBefore = cpuSnapshot(webs.map((w) => w.pid!));
    const sent = await sendMessages(pools, station.slug, token, song, SECONDS);
    const msgCpu = cpuPer(msgCpuBefore, cpuSnapshot(webs.map((w) => w.pid!)), sent.length);
    loads.push(loadavg()[0]);
    const accepted = sent.filter((s) => s.id !== null);
    // Wait for the stream to catch up (at most 10 s).
    for (let waited = 0; waited < 10_000 && accepted.some((s) => !reader.arrivals.has(s.id!)); waited += 100) await sleep(100);
    reader.close();
    const statuses: Record<string, number> = {};
    for (const s of sent) {
      const key = s.refusedByPolicy ? '409 recently-played' : String(s.status);
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
    const delivery: number[] = [];
    const sinceSent: number[] = [];
    let missingOnStream = 0;
    let twiceOnStream = 0;
    for (const s of accepted) {
      const arrivals = reader.arrivals.get(s.id!);
      if (!arrivals) {
        missingOnStream++;
        continue;
      }
      if (arrivals.length > 1) twiceOnStream++;
      delivery.push(Math.max(0, arrivals[0] - s.answeredAt));
      sinceSent.push(arrivals[0] - s.sentAt);
    }
    const acceptedIds = new Set(accepted.map((s) => s.id!));
    const strangersOnStream = [...reader.arrivals.keys()].filter((id) => !acceptedIds.has(id)).length;
    // The studio list, every page.
    const listed = new Map<string, number>();
    for (let cursor: string | null = ''; cursor !== null;) {
      const page = (await call(
        base,
        'GET',
        `/admin/v1/stations/${station.id}/inbox/messages?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        ADMIN_TOKEN,
      )) as { messages: Array<{ id: string }>; nextCursor: string | null };
      for (const m of page.messages) listed.set(m.id, (listed.get(m.id) ?? 0) + 1);
      cursor = page.nextCursor;
    }
    const missingInList = accepted.filter((s) => listed.get(s.id!) !== 1).length;
    const strangersInList = [...listed.keys()].filter((id) => !acceptedIds.has(id)).length;
    const deliveryLatency = summary(delivery);
    const messagesExact =
      missingOnStream === 0 && twiceOnStream === 0 && strangersOnStream === 0 && missingInList === 0 && strangersInList === 0;
    // The policy: every planned refusal (each 20th message) answered 409 recently-played, every other
    // message 202 — except what a saturated machine shed (503, nothing stored), counted apart.
    const expectedRefused = sent.filter((_, i) => i % 20 === 0).length;
    const shed = sent.filter((s) => s.status === 503).length;
    const policyRight = sent.every((s, i) => s.status === 503 || (i % 20 === 0 ? s.refusedByPolicy : s.status === 202));

    // Baselines: the bare upsert servers and a bare replay of the now-playing answer.
    process.stderr.write(`bench: baseline — bare upsert servers, the same burst, beside bare reads\n`);
    const nowPlaying = await fetch(nowPlayingUrl, { headers: listener });
    const bodyFile = join(tmpdir(), `waveline-inbox-${process.pid}.body`);
    writeFileSync(bodyFile, Buffer.from(await nowPlaying.arrayBuffer()));
    cleanups.push(() => rmSync(bodyFile, { force: true }));
    const barePort = await freePort();
    const bare = await startBare(bodyFile, nowPlaying.headers.get('etag') ?? '"x"', barePort);
    cleanups.push(() => stopRole(bare));
    const bareUrl = `http://127.0.0.1:${barePort}/`;
    const basePorts = await Promise.all(Array.from({ length: WEBS }, () => freePort()));
    const baselines: ChildProcess[] = [];
    for (const port of basePorts) baselines.push(await forkReady('./support/voteBaseline.ts', [String(port), DATABASE_URL, bodyFile]));
    cleanups.push(() => Promise.all(baselines.map((b) => stopRole(b))).then(() => undefined));
    const basePools = basePorts.map((port) => new Pool(`http://127.0.0.1:${port}`, { connections: 128, pipelining: 1 }));
    cleanups.push(() => Promise.all(basePools.map((p) => p.close())).then(() => undefined));
    for (let round = 1; round <= WARMUP_ROUNDS; round++) {
      await burst(basePools, () => `/warm-${round}`, { 'content-type': 'application/json' }, planVotes(WARMUP_VOTERS, WARMUP_SECONDS));
    }
    await reads(bareUrl, {}, 2);
    const bareQuietReads = await reads(bareUrl, {}, BURST_SECONDS);
    const basePlan = planVotes(VOTERS, BURST_SECONDS);
    const baseCpuBefore = cpuSnapshot(baselines.map((b) => b.pid!));
    const [baseVotes, bareBurstReads] = await Promise.all([
      burst(basePools, () => '/song-change', { 'content-type': 'application/json' }, basePlan),
      reads(bareUrl, {}, BURST_SECONDS),
    ]);
    const baseVoteCpu = cpuPer(baseCpuBefore, cpuSnapshot(baselines.map((b) => b.pid!)), basePlan.votes.length);
    loads.push(loadavg()[0]);
    // The same-process floor: the replayed read from the first bare upsert server, alone and while the
    // same burst (on a new play) goes to it and its siblings — as Waveline's reads share its web processes.
    process.stderr.write(`bench: baseline — the same burst again, reads from a bare upsert server itself\n`);
    const sameUrl = `http://127.0.0.1:${basePorts[0]}/now-playing`;
    await reads(sameUrl, {}, 2);
    const sameQuietReads = await reads(sameUrl, {}, BURST_SECONDS);
    const samePlan = planVotes(VOTERS, BURST_SECONDS);
    const [, sameBurstReads] = await Promise.all([
      burst(basePools, () => '/song-change-again', { 'content-type': 'application/json' }, samePlan),
      reads(sameUrl, {}, BURST_SECONDS),
    ]);
    loads.push(loadavg()[0]);
    const baseVoteLatency = summary(baseVotes.latencies);

    process.stderr.write(
      `bench: baseline — INSERT + PUBLISH at ${RATE}/s for ${BASELINE_MESSAGE_SECONDS} s, a Redis subscriber as reader\n`,
    );
    const ingestBasePort = await freePort();
    const ingestBase = await forkReady('./support/ingestBaseline.ts', [String(ingestBasePort), DATABASE_URL, REDIS_URL]);
    cleanups.push(() => stopRole(ingestBase));
    const subscriber = new Redis(REDIS_URL);
    cleanups.push(() => subscriber.disconnect());
    const baseArrivals = new Map<string, number>();
    subscriber.on('message', (_channel: string, raw: string) => {
      const at = performance.now();
      const id = (JSON.parse(raw) as { body: { id: string } }).body.id;
      if (!baseArrivals.has(id)) baseArrivals.set(id, at);
    });
    await subscriber.subscribe('bench-baseline:inbox');
    const ingestBasePool = new Pool(`http://127.0.0.1:${ingestBasePort}`, { connections: 128, pipelining: 1 });
    cleanups.push(() => ingestBasePool.close());
    const baseSent: Array<Promise<{ id: string; answeredAt: number }>> = [];
    const baseStart = performance.now();
    for (let i = 0; i < RATE * BASELINE_MESSAGE_SECONDS; i++) {
      const wait = baseStart + (i * 1000) / RATE - performance.now();
      if (wait > 1) await sleep(wait);
      const id = randomUUID();
      baseSent.push(
        ingestBasePool
          .request({
            method: 'POST',
            path: '/?stationSlug=inbox',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ id, kind: 'message', text: `Hello studio, greetings number ${i}` }),
          })
          .then(async (res) => {
            await res.body.text();
            return { id, answeredAt: performance.now() };
          }),
      );
    }
    const baseAnswers = await Promise.all(baseSent);
    await sleep(500);
    const baseDelivery = summary(
      baseAnswers.filter((a) => baseArrivals.has(a.id)).map((a) => Math.max(0, baseArrivals.get(a.id)! - a.answeredAt)),
    );
    loads.push(loadavg()[0]);

    const readRatio = round(burstReads.p99 / Math.max(0.001, quietReads.p99));
    const bareReadRatio = round(bareBurstReads.p99 / Math.max(0.001, bareQuietReads.p99));
    const sameReadRatio = round(sameBurstReads.p99 / Math.max(0.001, sameQuietReads.p99));
    const report = {
      when: startedAt.toISOString(),
      machine: `2 cores, load average (1 min) during the run: ${loads.map((l) => l.toFixed(1)).join(', ')}`,
      webs: WEBS,
      anomalies,
      voteBurst: {
        clients: VOTERS,
        votes: plan.votes.length,
        seconds: round(votes.elapsedMs / 1000, 1),
        failures: votes.failures,
        playIds: votes.playIds.size,
        planned,
        expected,
        answer: { likes: probe.likes, dislikes: probe.dislikes },
        playLog: logged ? { likes: logged.likes, dislikes: logged.dislikes } : 'not found',
        putLatencyMs: voteLatency,
        cpuMsPerVote: voteCpu,
      },
      reads: {
        rate: READ_RATE,
        alone: quietReads,
        duringBurst: burstReads,
      },
      messages: {
        rate: RATE,
        seconds: SECONDS,
        sent: sent.length,
        statuses,
        policyRefusalsExpected: expectedRefused,
        accepted: accepted.length,
        streamEvents: reader.events,
        missingOnStream,
        twiceOnStream,
        strangersOnStream,
        missingOrTwiceInList: missingInList,
        strangersInList,
        postLatencyMs: summary(sent.map((s) => s.answeredAt - s.sentAt)),
        deliveryAfterAnswerMs: deliveryLatency,
        deliveryAfterSentMs: summary(sinceSent),
        cpuMsPerMessage: msgCpu,
      },
      baseline: {
        votes: {
          what: `${WEBS} bare node:http process(es), one INSERT … ON CONFLICT DO UPDATE per PUT, the same burst and client`,
          votes: basePlan.votes.length,
          failures: baseVotes.failures,
          putLatencyMs: baseVoteLatency,
          cpuMsPerVote: baseVoteCpu,
        },
        reads: {
          what: 'bare node:http replaying the now-playing answer, alone and during the bare burst',
          alone: bareQuietReads,
          duringBurst: bareBurstReads,
          sameProcess: {
            what: 'the replayed answer read from the first bare upsert server, alone and while it takes the same burst again',
            alone: sameQuietReads,
            duringBurst: sameBurstReads,
          },
        },
        messages: {
          what: `bare node:http, one INSERT + one PUBLISH per POST, ${RATE}/s for ${BASELINE_MESSAGE_SECONDS} s; a Redis subscriber as the reader`,
          delivered: `${baseArrivals.size} of ${baseAnswers.length}`,
          deliveryAfterAnswerMs: baseDelivery,
        },
      },
      ratios: {
        putP99VsBaseline: `${round(voteLatency.p99 / Math.max(0.001, baseVoteLatency.p99))}×`,
        cpuPerVoteVsBaseline: `${round(voteCpu.total / Math.max(0.001, baseVoteCpu.total))}×`,
        readP99DuringBurst: `${readRatio}× (bare: ${bareReadRatio}×; bare in the process taking the votes: ${sameReadRatio}×)`,
      },
      targets: {
        votesCountedExactly: exact ? 'PASS' : 'FAIL',
        putP99Ms: `${voteLatency.p99} (target ≤ ${TARGETS.voteP99Ms}; baseline ${baseVoteLatency.p99}) ${verdict(voteLatency.p99, TARGETS.voteP99Ms)}`,
        messagesOnceInListAndStream: messagesExact ? 'PASS' : 'FAIL',
        policyRefusals: `${statuses['409 recently-played'] ?? 0} of ${expectedRefused}${shed ? ` (${shed} messages shed: 503)` : ''} ${policyRight ? 'PASS' : 'FAIL'}`,
        nothingShed: `votes ${Object.values(votes.failures).reduce((n, c) => n + c, 0)}, messages ${shed} ${shed === 0 && Object.keys(votes.failures).length === 0 ? 'PASS' : 'over'}`,
        streamDeliveryP99Ms: `${deliveryLatency.p99} (target ≤ ${TARGETS.deliveryP99Ms}; baseline ${baseDelivery.p99}) ${verdict(deliveryLatency.p99, TARGETS.deliveryP99Ms)}`,
        readP99Ratio: `${readRatio} (target ≤ ${TARGETS.readRatio}; floor: bare ${bareReadRatio}, bare in the process taking the votes ${sameReadRatio}) ${verdict(readRatio, TARGETS.readRatio)}`,
      },
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
    if (readerProcess) (await readerProcess).child.kill();
    await Promise.all(pools.map((p) => p.close()));
    redis.disconnect();
    await Promise.all(webs.map((w) => stopRole(w)));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
