import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// Child processes of the fan-out bench, spoken to over IPC. Each child runs under bash so it can raise
// its open-files limit first (`ulimit` is a shell builtin): 10 000 sockets need more than the usual 1024.

export interface Child {
  process: ChildProcess;
  request<T>(message: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

/** BENCH_CPU_PROF=<dir>: the child writes a V8 CPU profile there when it exits (as bench/support.ts's roles do). */
const profile = (script: string): string[] =>
  process.env.BENCH_CPU_PROF
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`,
        `--cpu-prof-name=${script.replace(/\W/g, '')}.${process.hrtime.bigint()}.cpuprofile`,
      ]
    : [];

export function startChild(script: string, args: string[], env: Record<string, string | undefined> = {}): Child {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(
    'bash',
    [
      '-c',
      'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"',
      'bench-child',
      process.execPath,
      '--expose-gc',
      ...profile(script),
      path,
      ...args,
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env } },
  );
  let nextId = 0;
  const pending = new Map<number, (value: unknown) => void>();
  child.on('message', (message: { id: number; reply: unknown }) => {
    pending.get(message.id)?.(message.reply);
    pending.delete(message.id);
  });
  return {
    process: child,
    request<T>(message: Record<string, unknown>): Promise<T> {
      const id = ++nextId;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, resolve as (value: unknown) => void);
        child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before answering ${String(message.type)}`)));
        child.send({ ...message, id });
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** In a child: answers requests from the parent with `handler`. */
export function serve(handler: (message: { type: string; [key: string]: unknown }) => Promise<unknown> | unknown): void {
  process.on('message', async (message: { id: number; type: string }) => {
    const reply = await handler(message);
    process.send?.({ id: message.id, reply });
  });
}

/** CPU time (user + system, and each, µs) and resident memory of this process, after a full collection when `collect`. */
export function processStats(collect: boolean): {
  cpuMicros: number;
  user: number;
  system: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
} {
  if (collect) (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  return {
    cpuMicros: cpu.user + cpu.system,
    user: cpu.user,
    system: cpu.system,
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    heapTotal: memory.heapTotal,
  };
}
