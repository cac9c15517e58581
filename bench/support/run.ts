import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export function freePort(): Promise<number> {
  return new Promise((ok) => {
    const srv = createServer().listen(0, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => ok(port));
    });
  });
}

export async function waitFor(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a Waveline role as its own process (as production runs it). */
export function startRole(role: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['src/main.ts', role], { cwd: root, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
}

export async function startBare(bodyFile: string, etag: string, port: number, kind: 'node' | 'koa' = 'node'): Promise<ChildProcess> {
  const child = fork(resolve(root, 'bench/support/bare-server.ts'), [bodyFile, etag, String(port), kind], { stdio: 'inherit' });
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
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** Runs a load and reports it with the server's CPU time per request (robust to a busy machine). */
export async function measure(url: string, headers: Record<string, string>, seconds: number, serverPid: number): Promise<Figures & { cpuUsPerRequest: number }> {
  const before = cpuMs(serverPid);
  const result = await autocannon({ url, headers, duration: seconds, connections: 50, pipelining: 1 });
  const cpu = cpuMs(serverPid) - before;
  const total = result.requests.total;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, cpuUsPerRequest: (cpu * 1000) / Math.max(1, total) };
}

export function table(rows: Array<Record<string, string | number>>): void {
  console.table(rows);
}
