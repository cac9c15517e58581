import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

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

export async function startBare(bodyFile: string, etag: string, port: number): Promise<ChildProcess> {
  const child = fork(resolve(root, 'bench/support/bare-server.ts'), [bodyFile, etag, String(port)], { stdio: 'inherit' });
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

export function table(rows: Array<Record<string, string | number>>): void {
  console.table(rows);
}
