import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// `waveline <args>` as a process of its own, as the Procfile starts a role: for the tests that need a
// real process (signals, SIGKILL, what it logs). Its stdout and stderr are collected (and so always read:
// a full pipe would block the child).

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface RoleProcess {
  child: ChildProcess;
  /** Everything the process wrote so far, stdout and stderr. */
  output(): string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

/** Starts `src/main.ts <args>` with `env` over this process' environment (LOG_LEVEL info unless given). */
export function startProcess(args: string[], env: Record<string, string | undefined> = {}): RoleProcess {
  const child = spawn(process.execPath, ['src/main.ts', ...args], {
    cwd: repoRoot,
    // A process given REDIS_URL (empty: the embedded one) uses it, also when the suite runs on a cluster.
    env: { ...process.env, LOG_LEVEL: 'info', ...('REDIS_URL' in env ? { REDIS_CLUSTER_URLS: '' } : {}), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  return { child, output: () => out, exited };
}
