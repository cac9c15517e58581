// npm run bench:reads — every listener read, plain (200) and conditional (304), each beside a bare
// node:http server replaying the same bytes in the same run, plus one GraphQL query (now-playing +
// current broadcast). Web runs as its own process (as bench:station does) with the rate limits off;
// 50 connections; the servers alternate over BENCH_ROUNDS rounds of BENCH_SECONDS each and the
// medians are kept. Prints req/s, p99 and server CPU per request with their ratios.
//
// Conditional requests revalidate like a polling app: each connection sends the ETag of the last 200
// it received (now-playing and weather show an age in whole seconds, so their ETag moves every second;
// a fixed If-None-Match would turn into 200s). The bare server gets the very same client.
//
// BENCH_COMPARE_DIR=<checkout>[,<checkout>…] also runs each checkout's web (e.g. a `git worktree` of an
// older commit with node_modules linked; labelled by the directory's name) on a database of its own,
// seeded the same way, in the same rounds: a before/after on one machine at one time. BENCH_CALLGRIND=1 counts instructions per request instead of
// timing (bench/support/callgrind.ts; BENCH_REQUESTS per measurement): steady on a shared machine.
//
// BENCH_TARGET=dev measures `waveline dev` (what `npm start` runs: web, worker and gateway in one process,
// on the embedded database and in-process adapters, as with DATABASE_URL and REDIS_URL unset) instead of
// the web role alone, for this checkout and every compared one.
//
// Own database (BENCH_DATABASE_URL, recreated; compared webs get `<name>_compare<i>`) and Redis index
// (BENCH_REDIS_URL); BENCH_TARGET=dev uses a fresh data directory per process instead. BENCH_READ_CACHE_MAX_BYTES=0 runs the web role without the read cache.
// BENCH_ONLY=<read,…> runs only those reads. A read is one row of READS below.
// BENCH_FLOOR=1 also measures the floor inside this checkout's process: bare's handler served from within
// the Waveline process (bench/support/inProcessBare.ts, loaded with --import) on a port of its own, in the
// same rounds, so the process's own cost (heap, timers, Node internals made megamorphic) is shown apart
// from the cached-read path's; and the contract's floor there too (`contractAnswer`: bare's answer plus
// what docs/api-reference.md#conventions-of-every-listener-read asks of every listener read — the
// credential's hash, the request id, the CORS headers). With BENCH_CALLGRIND both are counted in instructions
// too.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { BENCH_ENV, cpuSplitMs, freePort, recreateDatabase, startBare, startRole, stopRole, waitUntilReady } from './support.ts';
import { seed } from './support/readsSeed.ts';
import { callgrindWrap, countInstructions, removeCallgrindFiles } from './support/callgrind.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null;
const COMPARE_DIRS = (process.env.BENCH_COMPARE_DIR ?? '')
  .split(',')
  .filter(Boolean)
  .map((dir) => resolve(dir));
const CALLGRIND = process.env.BENCH_CALLGRIND === '1' || process.env.BENCH_CALLGRIND === 'all';
const TARGET = process.env.BENCH_TARGET === 'dev' ? 'dev' : 'web';
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const FLOOR = process.env.BENCH_FLOOR === '1';
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_reads';
const env: Record<string, string> = {
  ...BENCH_ENV,
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13',
  LOG_LEVEL: 'warn',
  ...(process.env.BENCH_READ_CACHE_MAX_BYTES !== undefined ? { READ_CACHE_MAX_BYTES: process.env.BENCH_READ_CACHE_MAX_BYTES } : {}),
};

/** What a read's path is built from: the seeded station. */
interface Seeded {
  slug: string;
  recordId: string;
  /** The station has a stream (`mp3`, 6 s) and up next on: false on an older compared checkout. */
  streams: boolean;
  /** A second station publishing podcasts (its slug), or null on a checkout without them. */
  podcastSlug: string | null;
  podcastProgramId: string | null;
}

const api = (s: Seeded) => `/api/v1/stations/${s.slug}`;
const GQL_QUERY = encodeURIComponent(
  '{ nowPlaying { track { title artist } elapsedSeconds freshness { status ageSeconds } } currentBroadcast { asOf broadcast { id title status } } }',
);

/** The reads measured: a name (BENCH_ONLY), the path on the seeded station, and whether it has a 304 case. */
export const READS: ReadonlyArray<{
  name: string;
  path: (s: Seeded) => string;
  conditional: boolean;
  /** Needs the seeded stream (`streams`) or the podcast station (`podcasts`); anonymous reads send no credential. */
  needs?: 'streams' | 'podcasts';
  anonymous?: true;
}> = [
  { name: 'station document', path: (s) => api(s), conditional: true },
  { name: 'schemas', path: (s) => `${api(s)}/schemas`, conditional: true },
  { name: 'content list (type=article&limit=25)', path: (s) => `${api(s)}/content?type=article&limit=25`, conditional: true },
  { name: 'content by id', path: (s) => `${api(s)}/content/${s.recordId}`, conditional: true },
  { name: 'content by slug', path: (s) => `${api(s)}/content/article/by-slug/article-99`, conditional: true },
  { name: 'schedule (default week)', path: (s) => `${api(s)}/schedule`, conditional: true },
  { name: 'programs', path: (s) => `${api(s)}/programs`, conditional: true },
  { name: 'broadcast/current', path: (s) => `${api(s)}/broadcast/current`, conditional: true },
  { name: 'now-playing', path: (s) => `${api(s)}/now-playing`, conditional: true },
  { name: 'track-history', path: (s) => `${api(s)}/track-history`, conditional: true },
  { name: 'now-playing?stream=', path: (s) => `${api(s)}/now-playing?stream=mp3`, conditional: true, needs: 'streams' },
  { name: 'live', path: (s) => `${api(s)}/live`, conditional: true, needs: 'streams' },
  { name: 'live?stream=', path: (s) => `${api(s)}/live?stream=mp3`, conditional: true, needs: 'streams' },
  { name: 'weather', path: (s) => `${api(s)}/weather`, conditional: true },
  { name: 'traffic', path: (s) => `${api(s)}/traffic`, conditional: true },
  { name: 'schedule.ics', path: (s) => `${api(s)}/schedule.ics`, conditional: true },
  { name: 'podcast feed', path: (s) => `/podcasts/${s.podcastSlug}/feed.xml`, conditional: true, needs: 'podcasts', anonymous: true },
  {
    name: 'podcast program feed',
    path: (s) => `/podcasts/${s.podcastSlug}/programs/${s.podcastProgramId}/feed.xml`,
    conditional: true,
    needs: 'podcasts',
    anonymous: true,
  },
  { name: 'GraphQL now-playing + current broadcast', path: (s) => `${api(s)}/graphql?query=${GQL_QUERY}`, conditional: false },
];

/** A server measured: a web role (this checkout's or the compared one) or the bare server. */
interface Server {
  label: string;
  process: ChildProcess;
  url: string;
  headers: Record<string, string>;
}

interface Figures {
  rps: number;
  p99: number;
  /** CPU µs per request, user + system, and the user-space part of it (or thousands of instructions, BENCH_CALLGRIND). */
  cpu: number;
  user: number;
  non2xx3xx: number;
}

/** One load of SECONDS (or REQUESTS under callgrind); `revalidate` makes each request carry the ETag of the last 200 seen. */
async function measure(server: Server, revalidate: boolean): Promise<Figures> {
  let etag = '';
  const requests = revalidate
    ? [
        {
          setupRequest: (req: any) => ({ ...req, headers: { ...server.headers, 'if-none-match': etag } }),
          onResponse: (status: number, _body: string, _context: unknown, responseHeaders: Record<string, string>) => {
            if (status === 200) etag = responseHeaders.etag ?? responseHeaders.ETag ?? etag;
          },
        },
      ]
    : undefined;
  const options = {
    url: server.url,
    headers: server.headers,
    connections: CALLGRIND ? 1 : 50,
    pipelining: 1,
    ...(CALLGRIND ? { amount: REQUESTS } : { duration: SECONDS }),
    ...(requests ? { requests } : {}),
  } as autocannon.Options;
  const pid = server.process.pid!;
  let result!: autocannon.Result;
  const perRequest = (total: number) => total / Math.max(1, result.requests.total);
  if (CALLGRIND) {
    const instructions = await countInstructions(pid, async () => (result = await autocannon(options)));
    const k = perRequest(instructions) / 1000;
    return { rps: result.requests.average, p99: result.latency.p99, cpu: k, user: k, non2xx3xx: result.non2xx - (result['3xx'] ?? 0) };
  }
  const before = cpuSplitMs(pid);
  result = await autocannon(options);
  const after = cpuSplitMs(pid);
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    cpu: perRequest((after.user + after.system - before.user - before.system) * 1000),
    user: perRequest((after.user - before.user) * 1000),
    non2xx3xx: result.non2xx - (result['3xx'] ?? 0),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const wrap = CALLGRIND ? callgrindWrap() : [];

/** A web role (or `waveline dev`, BENCH_TARGET=dev) of the checkout in `dir` on a fresh database of its own, seeded. */
async function startWeb(label: string, dir: string | undefined, database: string) {
  const port = await freePort();
  // The floor is measured in this checkout's process only.
  const floorPort = FLOOR && dir === undefined ? await freePort() : 0;
  const floor: { env: Record<string, string>; nodeArgs: string[] } = floorPort
    ? {
        env: { BENCH_FLOOR_PORT: String(floorPort) },
        nodeArgs: ['--import', new URL('./support/inProcessBare.ts', import.meta.url).pathname],
      }
    : { env: {}, nodeArgs: [] };
  let web: ChildProcess;
  let dataDir: string | null = null;
  if (TARGET === 'dev') {
    // As `npm start` runs on a fresh clone: no DATABASE_URL or REDIS_URL, so PGlite and in-process adapters.
    dataDir = mkdtempSync(join(tmpdir(), 'waveline-bench-reads-dev-'));
    const devEnv = { ...env, DATABASE_URL: '', REDIS_URL: '', WAVELINE_DATA_DIR: dataDir, WAVELINE_DEMO: '0' };
    web = startRole(
      'dev',
      { ...devEnv, ...floor.env, PORT: String(port), GATEWAY_PORT: String(await freePort()) },
      { cwd: dir, wrap, nodeArgs: floor.nodeArgs },
    );
  } else {
    const roleEnv = { ...env, DATABASE_URL: database };
    await recreateDatabase(database);
    const migrate = startRole('migrate', roleEnv, { cwd: dir });
    await new Promise((ok) => migrate.on('exit', ok));
    // Under callgrind the web role is seeded at full speed first, then restarted under valgrind on the
    // same database (seeding hundreds of admin writes under valgrind took longer than the measurement).
    web = startRole(
      'web',
      { ...roleEnv, ...floor.env, PORT: String(port) },
      { cwd: dir, wrap: TARGET === 'web' && CALLGRIND ? [] : wrap, nodeArgs: floor.nodeArgs },
    );
  }
  const base = `http://127.0.0.1:${port}`;
  await waitUntilReady(base, CALLGRIND || TARGET === 'dev' ? 300_000 : 30_000);
  const seeded = await seed(base);
  if (CALLGRIND && TARGET === 'web') {
    await stopRole(web);
    web = startRole(
      'web',
      { ...env, ...floor.env, DATABASE_URL: database, PORT: String(port) },
      { cwd: dir, wrap, nodeArgs: floor.nodeArgs },
    );
    await waitUntilReady(base, 600_000);
  }
  return { label, web, base, seeded, dataDir, floorPort, headers: { authorization: `Bearer ${seeded.token}` } };
}

async function main() {
  // Labelled by checkout when there are several (this one is the working directory's code).
  const webs = [await startWeb(COMPARE_DIRS.length ? basename(process.cwd()) : 'waveline', undefined, databaseUrl)];
  for (const [i, dir] of COMPARE_DIRS.entries()) webs.push(await startWeb(basename(dir), dir, `${databaseUrl}_compare${i}`));
  const rows: Array<Record<string, string | number>> = [];
  const unit = CALLGRIND ? 'k instructions/req' : 'CPU µs/req';
  try {
    for (const read of READS) {
      if (ONLY && !ONLY.has(read.name)) continue;
      // A read of listener time runs on the checkouts that have it (the first is always this one).
      const able = webs.filter((w) =>
        read.needs === 'streams' ? w.seeded.streams : read.needs === 'podcasts' ? w.seeded.podcastSlug !== null : true,
      );
      if (able[0] !== webs[0]) throw new Error(`${read.name}: this checkout could not seed it`);
      const servers: Server[] = able.map((w) => ({
        label: w.label,
        process: w.web,
        url: `${w.base}${read.path(w.seeded)}`,
        headers: read.anonymous ? {} : w.headers,
      }));
      const first = await fetch(servers[0].url, { headers: servers[0].headers });
      if (first.status !== 200) throw new Error(`${read.name}: ${first.status} ${await first.text()}`);
      const bodyFile = join(tmpdir(), `waveline-reads-${process.pid}.body`);
      writeFileSync(bodyFile, Buffer.from(await first.arrayBuffer()));
      const barePort = await freePort();
      const etag = first.headers.get('etag') ?? '"graphql"';
      const bare = await startBare(bodyFile, etag, barePort, 'node', wrap);
      if (webs[0].floorPort) {
        const floorUrl = `http://127.0.0.1:${webs[0].floorPort}/`;
        const token: Record<string, string> = read.anonymous ? {} : { 'x-token': webs[0].seeded.token };
        await fetch(floorUrl, { method: 'PUT', headers: { 'x-etag': etag, ...token }, body: readFileSync(bodyFile) });
        servers.push({ label: `floor (bare in ${webs[0].label})`, process: webs[0].web, url: floorUrl, headers: {} });
        servers.push({
          label: `contract floor (in ${webs[0].label})`,
          process: webs[0].web,
          url: `${floorUrl}contract`,
          headers: read.anonymous ? {} : webs[0].headers,
        });
      }
      servers.push({ label: 'bare', process: bare, url: `http://127.0.0.1:${barePort}/`, headers: {} });
      try {
        // Warm every server (JIT, caches).
        for (const server of servers)
          await autocannon({ url: server.url, headers: server.headers, duration: CALLGRIND ? 5 : 1, connections: CALLGRIND ? 5 : 50 });
        const cases = read.conditional ? (['200', '304'] as const) : (['200'] as const);
        for (const kind of cases) {
          const runs = servers.map((): Figures[] => []);
          for (let round = 0; round < ROUNDS; round++) {
            for (const [i, server] of servers.entries()) runs[i].push(await measure(server, kind === '304'));
          }
          const m = runs.map((r) => ({
            rps: median(r.map((f) => f.rps)),
            p99: median(r.map((f) => f.p99)),
            cpu: median(r.map((f) => f.cpu)),
            user: median(r.map((f) => f.user)),
            errors: r.reduce((n, f) => n + f.non2xx3xx, 0),
          }));
          const b = m[m.length - 1];
          const row: Record<string, string | number> = { read: read.name, case: kind };
          for (const [i, server] of servers.slice(0, -1).entries()) {
            const w = m[i];
            const label = server.label;
            row[`${label} req/s vs bare`] = `${((w.rps / b.rps) * 100).toFixed(1)}% (${Math.round(w.rps)})`;
            row[`${label} p99 ms`] = w.p99;
            row[`${label} ${unit}`] = w.cpu.toFixed(CALLGRIND ? 0 : 1);
            row[`${label} vs bare`] = `${(w.cpu / b.cpu).toFixed(2)}×`;
            // The kernel's part (mostly the socket write) is about the same for every server; the difference is user space.
            if (!CALLGRIND) row[`${label} user µs/req`] = w.user.toFixed(1);
            if (w.errors) row[`${label} non-2xx/3xx`] = w.errors;
          }
          row['bare req/s'] = Math.round(b.rps);
          row['bare p99 ms'] = b.p99;
          row[`bare ${unit}`] = b.cpu.toFixed(CALLGRIND ? 0 : 1);
          if (!CALLGRIND) row['bare user µs/req'] = b.user.toFixed(1);
          rows.push(row);
          console.log(JSON.stringify(row));
        }
      } finally {
        bare.kill();
      }
    }
  } finally {
    for (const w of webs) {
      await stopRole(w.web);
      if (w.dataDir) rmSync(w.dataDir, { recursive: true, force: true });
    }
    if (CALLGRIND) removeCallgrindFiles();
  }
  const what = CALLGRIND
    ? `instructions per request (callgrind, user space, every thread) of ${REQUESTS} requests on 1 connection, median of ${ROUNDS} rounds`
    : `median of ${ROUNDS} alternating rounds of ${SECONDS}s per case, 50 connections`;
  const measured = TARGET === 'dev' ? '`waveline dev` (npm start: all roles, embedded)' : 'the web role';
  console.log(`\nlistener reads, ${new Date().toISOString()}, ${what}; ${measured} and bare node:http each in their own process`);
  for (const dir of COMPARE_DIRS) console.log(`${basename(dir)}: the web role of ${dir}`);
  console.log(
    '304 = the client revalidates with the ETag of its last 200 (as a polling app does); GraphQL answers carry no ETag (200 only).',
  );
  console.table(rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
