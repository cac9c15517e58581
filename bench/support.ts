import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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

export { recreateDatabase } from '../src/lib/migrate.ts';

/**
 * The environment every bench gives the processes it measures: production mode with a fixed secret and
 * admin token (its `WAVELINE_ADMIN_TOKEN` is the token the bench sends), and every rate limit off, as
 * benchmarks run (decisions.md). Each bench adds its own database, Redis index, log level and ports.
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
} as const;

/**
 * Starts `waveline <role>` as its own Node process (as the Procfile does). BENCH_CPU_PROF=<dir> writes a V8
 * CPU profile of each role there. `cwd` runs another checkout's code (a worktree of an older commit, for a
 * before/after in one run); `wrap` runs it under a tool (`callgrindWrap`, bench/support/callgrind.ts).
 */
export function startRole(role: string, env: Record<string, string>, opts: { cwd?: string; wrap?: string[] } = {}): ChildProcess {
  const args = [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_CPU_PROF] : []), 'src/main.ts', role];
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
