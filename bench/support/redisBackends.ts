import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Redis, type Cluster } from 'ioredis';
import { createCluster } from '../../src/lib/redis.ts';

// Which Redis a bench's roles run on, for the benches that can run on either (bench:push, bench:reminders;
// docs/benchmarks.md): one Redis (the bench's BENCH_REDIS_URL, an index of its own, flushed) or a Redis
// Cluster (BENCH_REDIS_CLUSTER_URLS, every master flushed), as bench:cluster runs them
// (docs/operations.md, "Redis Cluster"). BENCH_REDIS picks: `one`, `cluster`, or `both` (the same
// measurement on one Redis, then on the cluster, in one run, and cluster ÷ one for each headline figure).
// Unset, it is `cluster` when BENCH_REDIS_CLUSTER_URLS is set and `one` otherwise, so a bench run without
// either variable runs on one Redis exactly as before.

export type RedisBackend = 'one' | 'cluster';

/** The local cluster of scripts/redis-cluster.sh (its three first nodes), as bench:cluster seeds it. */
export const DEFAULT_CLUSTER_URLS = 'redis://127.0.0.1:7101,redis://127.0.0.1:7102,redis://127.0.0.1:7103';

/** The Redis backends to run, in order, from BENCH_REDIS and BENCH_REDIS_CLUSTER_URLS. */
export function redisBackends(env: NodeJS.ProcessEnv): RedisBackend[] {
  const mode = env.BENCH_REDIS ?? (env.BENCH_REDIS_CLUSTER_URLS ? 'cluster' : 'one');
  if (mode === 'one' || mode === 'cluster') return [mode];
  if (mode === 'both') return ['one', 'cluster'];
  throw new Error(`BENCH_REDIS must be one, cluster or both (got ${mode})`);
}

export interface RedisUnderBench {
  backend: RedisBackend;
  /** What the output says it ran on. */
  label: string;
  /** REDIS_URL / REDIS_CLUSTER_URLS for the roles (the other one emptied: setting both stops a role). */
  roleEnv: { REDIS_URL: string; REDIS_CLUSTER_URLS: string };
  /** Empties it: FLUSHDB of the bench's index on one Redis, FLUSHALL on every master of the cluster. */
  flush(): Promise<void>;
  /** Commands run so far, every command summed (INFO commandstats, over every master on the cluster). */
  commandCalls(): Promise<number>;
  close(): void;
}

/**
 * The bench's own connection to `backend`: one ioredis connection to BENCH_REDIS_URL, or an ioredis
 * Cluster on the seeds, whose masters (per-master connections of the Cluster client) are flushed and read
 * one by one. Starts the local cluster (scripts/redis-cluster.sh, idempotent) when it is the default one.
 */
export async function openRedis(backend: RedisBackend, redisUrl: string, clusterUrls: string): Promise<RedisUnderBench> {
  if (backend === 'one') {
    const redis = new Redis(redisUrl);
    return {
      backend,
      label: `one Redis (${redisUrl})`,
      roleEnv: { REDIS_URL: redisUrl, REDIS_CLUSTER_URLS: '' },
      flush: async () => void (await redis.flushdb()),
      commandCalls: () => calls([redis]),
      close: () => redis.disconnect(),
    };
  }
  if (clusterUrls === DEFAULT_CLUSTER_URLS && existsSync('scripts/redis-cluster.sh'))
    execFileSync('bash', ['scripts/redis-cluster.sh', 'start'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const cluster = createCluster(clusterUrls.split(','), { maxRetriesPerRequest: 2 });
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`the Redis Cluster at ${clusterUrls} was not ready within 30 s`)), 30_000);
    cluster.once('ready', () => {
      clearTimeout(timer);
      ok();
    });
  }).catch((err) => {
    cluster.disconnect();
    throw err;
  });
  const masters = () => (cluster as Cluster).nodes('master');
  const count = masters().length;
  return {
    backend,
    label: `Redis Cluster (${clusterUrls}; ${count} masters)`,
    roleEnv: { REDIS_URL: '', REDIS_CLUSTER_URLS: clusterUrls },
    flush: async () => {
      for (const master of masters()) await master.flushall();
    },
    commandCalls: () => calls(masters()),
    close: () => cluster.disconnect(),
  };
}

/** Every command's calls summed over `nodes` (INFO commandstats), the INFO calls themselves left out. */
async function calls(nodes: Redis[]): Promise<number> {
  let total = 0;
  for (const node of nodes) {
    const info = await node.info('commandstats');
    for (const match of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) if (match[1] !== 'info') total += Number(match[2]);
  }
  return total;
}

/**
 * Runs `run` on each backend in turn and answers what the bench prints: the one report, or with both
 * `{one, cluster, clusterOverOne}` — each `headline` figure on the cluster ÷ on one Redis (the two runs
 * one after the other: a load that comes or goes between them moves these too).
 */
export async function runOnEachBackend<R>(
  what: string,
  backends: readonly RedisBackend[],
  run: (backend: RedisBackend) => Promise<R>,
  headline: (report: R) => Record<string, number>,
): Promise<R | { one: R; cluster: R; clusterOverOne: Record<string, number | null> }> {
  const reports: R[] = [];
  for (const backend of backends) {
    if (backends.length > 1) process.stderr.write(`bench: ${what} on ${backend === 'one' ? 'one Redis' : 'the Redis Cluster'}\n`);
    reports.push(await run(backend));
  }
  if (reports.length === 1) return reports[0];
  return { one: reports[0], cluster: reports[1], clusterOverOne: clusterOverOne(headline(reports[0]), headline(reports[1])) };
}

/** cluster ÷ one for each figure present in both (two decimals), by its name. */
function clusterOverOne(one: Record<string, number>, cluster: Record<string, number>): Record<string, number | null> {
  const ratios: Record<string, number | null> = {};
  for (const [name, value] of Object.entries(one)) {
    const other = cluster[name];
    ratios[name] = typeof other === 'number' && value !== 0 ? +(other / value).toFixed(2) : null;
  }
  return ratios;
}
