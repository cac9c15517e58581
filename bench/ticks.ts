// npm run bench:ticks — what keeping one tick object alive (src/lib/tickShapes.ts) saves a process whose
// old generation is collected often. Two bare node:http servers answer the same bytes and each runs a
// full collection every TICKS_GC_MS (1000); one keeps a tick object, one does not. They alternate over
// BENCH_ROUNDS rounds of BENCH_SECONDS under 50 connections; prints server CPU per request and req/s.
// Without the kept tick, the collections free the tick literal's maps, and every process.nextTick of
// every request then stores its computed keys through a runtime call (docs/benchmarks.md#the-tick-object-shapes).
import { fork, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { cpuSplitMs, freePort } from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

async function start(keep: boolean): Promise<{ label: string; child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = fork(new URL('./support/tickServer.ts', import.meta.url).pathname, [], {
    execArgv: [...process.execArgv, '--expose-gc'],
    env: { ...process.env, PORT: String(port), TICKS_KEEP: keep ? '1' : '0' },
  });
  await new Promise<void>((ok) => child.once('message', () => ok()));
  return { label: keep ? 'tick kept' : 'no tick kept', child, url: `http://127.0.0.1:${port}/` };
}

const servers = [await start(false), await start(true)];
const figures = new Map<string, Array<{ cpu: number; rps: number }>>(servers.map((s) => [s.label, []]));
try {
  for (const s of servers) await autocannon({ url: s.url, connections: 50, duration: 2 });
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of servers) {
      const before = cpuSplitMs(s.child.pid!);
      const result = await autocannon({ url: s.url, connections: 50, duration: SECONDS });
      const after = cpuSplitMs(s.child.pid!);
      const cpu = ((after.user + after.system - before.user - before.system) * 1000) / result.requests.total;
      figures.get(s.label)!.push({ cpu, rps: result.requests.average });
    }
  }
} finally {
  for (const s of servers) s.child.kill();
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(
  `\ntick shapes, ${new Date().toISOString()}, a full collection every ${process.env.TICKS_GC_MS ?? 1000} ms, median of ${ROUNDS} rounds of ${SECONDS}s, 50 connections`,
);
console.table(
  [...figures].map(([label, runs]) => ({
    server: label,
    'CPU µs/req': median(runs.map((r) => r.cpu)).toFixed(1),
    'req/s': Math.round(median(runs.map((r) => r.rps))),
  })),
);
