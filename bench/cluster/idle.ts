// The idle CPU of a web, a worker and a gateway process, on the Redis Cluster and on one Redis, for one or
// more checkouts in alternating rounds (a before/after in one run: `git worktree add ../base <commit>`,
// node_modules linked as docs/benchmarks.md says). No listeners, no stations, no requests: what a process
// spends on its own — timers, BullMQ's polling, and on the cluster each client's slot-map reads.
// Usage: node bench/cluster/idle.ts [checkout…] (default: this one). BENCH_DATABASE_URL, BENCH_REDIS_URL,
// BENCH_REDIS_CLUSTER_URLS, BENCH_ROUNDS (2), BENCH_SECONDS (10), BENCH_BACKENDS (`cluster,one`).
import { resolve } from 'node:path';
import { BENCH_ENV, cpuMs, freePort, recreateDatabase, startRole, stopRole, waitUntilReady } from '../support.ts';

const env = process.env;
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_cluster';
const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/3';
const CLUSTER_URLS = env.BENCH_REDIS_CLUSTER_URLS ?? 'redis://127.0.0.1:7101,redis://127.0.0.1:7102,redis://127.0.0.1:7103';
const ROUNDS = Number(env.BENCH_ROUNDS ?? 2);
const SECONDS = Number(env.BENCH_SECONDS ?? 10);
const BACKENDS = (env.BENCH_BACKENDS ?? 'cluster,one').split(',').filter((b) => b !== '');
const dirs = process.argv.length > 2 ? process.argv.slice(2).map((d) => resolve(d)) : [process.cwd()];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await recreateDatabase(DATABASE_URL);
const base = { ...BENCH_ENV, DATABASE_URL, LOG_LEVEL: 'warn' };
const migrate = startRole('migrate', { ...base, REDIS_URL, REDIS_CLUSTER_URLS: '' });
await new Promise((ok) => migrate.on('exit', ok));

const rows: Array<Record<string, string | number>> = [];
for (let round = 0; round < ROUNDS; round++)
  for (const backend of BACKENDS)
    for (const dir of dirs) {
      const roleEnv = {
        ...base,
        ...(backend === 'cluster' ? { REDIS_URL: '', REDIS_CLUSTER_URLS: CLUSTER_URLS } : { REDIS_URL, REDIS_CLUSTER_URLS: '' }),
      };
      const port = await freePort();
      const web = startRole('web', { ...roleEnv, PORT: String(port) }, { cwd: dir });
      const worker = startRole('worker', { ...roleEnv, WORKER_PORT: '0' }, { cwd: dir });
      const gateway = startRole('gateway', { ...roleEnv, PORT: String(await freePort()) }, { cwd: dir });
      const children = [web, worker, gateway];
      try {
        await waitUntilReady(`http://127.0.0.1:${port}`);
        await sleep(4000); // start-up work (job schedulers, first reads) done
        const before = children.map((c) => cpuMs(c.pid!));
        await sleep(SECONDS * 1000);
        const [w, k, g] = children.map((c, i) => +((cpuMs(c.pid!) - before[i]) / SECONDS).toFixed(1));
        rows.push({ round: round + 1, backend, checkout: dir, webMsPerSecond: w, workerMsPerSecond: k, gatewayMsPerSecond: g });
        process.stderr.write(`bench: ${backend} ${dir}: idle ms a second — web ${w}, worker ${k}, gateway ${g}\n`);
      } finally {
        for (const child of children) await stopRole(child);
      }
    }
console.log(JSON.stringify({ when: new Date().toISOString(), seconds: SECONDS, rows }, null, 2));
process.exit(0);
