import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createServer } from 'node:net';

// Small helpers shared by the benchmarks: processes of our own roles, a fresh database, percentiles.

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export function summary(values: number[]): { count: number; p50: number; p90: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? NaN),
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

import { recreateDatabase } from '../src/lib/migrate.ts';
export { recreateDatabase };

/**
 * The environment every bench gives the processes it measures: production mode with a fixed secret and
 * admin token (its `WAVELINE_ADMIN_TOKEN` is the token the bench sends), and every rate limit off, as
 * benchmarks run (docs/benchmarks.md). Each bench adds its own database, Redis index, log level and ports.
 */
export const BENCH_ENV = {
  NODE_ENV: 'production',
  WAVELINE_SECRET: 'bench-secret-0123456789abcdef',
  WAVELINE_ADMIN_TOKEN: 'bench-admin-token-0123456789',
  RATE_LIMIT_LISTENER_PER_MINUTE: '0',
  RATE_LIMIT_GRAPHQL_PER_MINUTE: '0',
  RATE_LIMIT_PUSH_PER_MINUTE: '0',
  RATE_LIMIT_INGEST_PER_MINUTE: '0',
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
  RATE_LIMIT_ADMIN_FAILURES_PER_MINUTE: '0',
} as const;

/**
 * Starts `waveline <role>` as its own Node process (as the Procfile does). BENCH_CPU_PROF=<dir> writes a V8
 * CPU profile of each role there; `nodeArgs` go to Node before the script. `cwd` runs another checkout's code (a worktree of an older commit, for a
 * before/after in one run); `wrap` runs it under a tool (`callgrindWrap`, bench/support/callgrind.ts).
 */
export function startRole(
  role: string,
  env: Record<string, string>,
  opts: { cwd?: string; wrap?: string[]; nodeArgs?: string[] } = {},
): ChildProcess {
  const args = [
    ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_CPU_PROF] : []),
    ...(opts.nodeArgs ?? []),
    'src/main.ts',
    role,
  ];
  const [command, ...rest] = [...(opts.wrap ?? []), process.execPath, ...args];
  const child = spawn(command, rest, { cwd: opts.cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') process.stderr.write(`bench: ${role} exited (${code ?? signal})\n`);
  });
  return child;
}

export async function stopRole(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export async function waitUntilReady(baseUrl: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${baseUrl} did not become ready`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ---- HTTP load against a server process, with its CPU time per request ----

export async function startBare(
  bodyFile: string,
  etag: string,
  port: number,
  kind: 'node' | 'koa' = 'node',
  wrap: string[] = [],
): Promise<ChildProcess> {
  const script = new URL('./support/bareServer.ts', import.meta.url).pathname;
  const child = wrap.length
    ? spawn(wrap[0], [...wrap.slice(1), process.execPath, script, bodyFile, etag, String(port), kind], {
        stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      })
    : fork(script, [bodyFile, etag, String(port), kind], { stdio: 'inherit' });
  await new Promise<void>((ok) => child.once('message', () => ok()));
  return child;
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

export async function load(url: string, headers: Record<string, string>, seconds: number, connections = 50): Promise<Figures> {
  const result = await autocannon({ url, headers, duration: seconds, connections, pipelining: 1 });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx };
}

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux). */
export function cpuMs(pid: number): number {
  const { user, system } = cpuSplitMs(pid);
  return user + system;
}

/** CPU time (ms) a process has used so far in user space and in the kernel, from /proc (Linux). */
export function cpuSplitMs(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime in ticks; USER_HZ is 100 on Linux
  return { user: (Number(fields[11]) * 1000) / 100, system: (Number(fields[12]) * 1000) / 100 };
}

/** CPU time (ms) used so far by every process whose command name is `comm` (e.g. all of Postgres' backends). */
export function cpuMsOf(comm: string): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) total += cpuMs(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Runs a load and reports it with the server's CPU time per request (robust to a busy machine). */
export async function measure(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  serverPid: number,
): Promise<Figures & { cpuUsPerRequest: number }> {
  const before = cpuMs(serverPid);
  const result = await autocannon({ url, headers, duration: seconds, connections: 50, pipelining: 1 });
  const cpu = cpuMs(serverPid) - before;
  const total = result.requests.total;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    cpuUsPerRequest: (cpu * 1000) / Math.max(1, total),
  };
}

export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Loads Waveline's `url` and a bare server's alternately, `rounds` rounds of `seconds` each (so a busy
 * machine weighs on both alike), and reports the medians as one table row: req/s of each and their
 * ratio, p99 latency, server CPU per request, and Waveline's answers that were neither 2xx nor 304.
 */
export async function besideBare(
  ours: { url: string; pid: number },
  bare: { url: string; pid: number },
  headers: Record<string, string>,
  rounds: number,
  seconds: number,
): Promise<Record<string, string | number>> {
  const w: Array<Awaited<ReturnType<typeof measure>>> = [];
  const b: typeof w = [];
  const errors: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const before = cpuMs(ours.pid);
    const result = await autocannon({ url: ours.url, headers, duration: seconds, connections: 50, pipelining: 1 });
    w.push({
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      cpuUsPerRequest: ((cpuMs(ours.pid) - before) * 1000) / Math.max(1, result.requests.total),
    });
    errors.push(result.non2xx - (result['3xx'] ?? 0));
    b.push(await measure(bare.url, headers, seconds, bare.pid));
  }
  const of = (list: typeof w, key: 'rps' | 'p99' | 'cpuUsPerRequest') => median(list.map((r) => r[key]));
  const bad = errors.reduce((n, e) => n + e, 0);
  return {
    'waveline req/s': Math.round(of(w, 'rps')),
    'bare req/s': Math.round(of(b, 'rps')),
    'req/s vs bare': `${((of(w, 'rps') / of(b, 'rps')) * 100).toFixed(1)}%`,
    'waveline p99 ms': of(w, 'p99'),
    'bare p99 ms': of(b, 'p99'),
    'CPU µs/req (waveline / bare)': `${of(w, 'cpuUsPerRequest').toFixed(0)} / ${of(b, 'cpuUsPerRequest').toFixed(0)}`,
    ...(bad ? { 'non-2xx/3xx': bad } : {}),
  };
}

/** A fresh database (recreated, migrated) and `waveline web` on a free port, ready: how a bench against web starts. */
export async function startBenchWeb(databaseUrl: string, env: Record<string, string>): Promise<{ web: ChildProcess; base: string }> {
  await recreateDatabase(databaseUrl);
  const migrate = startRole('migrate', env);
  await new Promise((ok) => migrate.on('exit', ok));
  const port = await freePort();
  const web = startRole('web', { ...env, PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(base);
  } catch (err) {
    await stopRole(web);
    throw err;
  }
  return { web, base };
}

/** The answer at `url` (a 200) replayed with its ETag by a bare node:http server in its own process; both warmed up. */
export async function bareReplay(url: string, name: string): Promise<{ bytes: Buffer; etag: string; bare: ChildProcess; bareUrl: string }> {
  const first = await fetch(url);
  if (first.status !== 200) throw new Error(`${name}: ${first.status} ${await first.text()}`);
  const bytes = Buffer.from(await first.arrayBuffer());
  const etag = first.headers.get('etag')!;
  const bodyFile = join(tmpdir(), `waveline-${name.replace(/\W+/g, '-')}-${process.pid}.body`);
  writeFileSync(bodyFile, bytes);
  const barePort = await freePort();
  const bare = await startBare(bodyFile, etag, barePort);
  const bareUrl = `http://127.0.0.1:${barePort}/`;
  try {
    await autocannon({ url, duration: 1, connections: 50 });
    await autocannon({ url: bareUrl, duration: 1, connections: 50 });
  } catch (err) {
    bare.kill();
    throw err;
  }
  return { bytes, etag, bare, bareUrl };
}
