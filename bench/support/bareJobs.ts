import { Cluster, Redis, type RedisOptions } from 'ioredis';

// The Redis side of bench:cluster's `feed-job` floor (docs/benchmarks.md, "Redis Cluster and read
// replicas"), shared by the bare ingest server (ingestBaseline.ts `feed-job`) and the bare worker
// (bareJobWorker.ts). No Waveline code: what Waveline does for one awaited `nowPlaying.follow` job is
// written out here, so the floor stays a floor when Waveline changes, and this file is the one place to
// follow it by hand:
//   - the queue `ingest`, BullMQ prefix `waveline:bull` on one Redis and `waveline:bull:{ingest}` on the
//     cluster (the queue's own hash tag: every key of the queue and its scripts in one slot,
//     docs/operations.md#names-on-redis-cluster), the queues' default job options, and the job added
//     under the observation's id with `removeOnComplete: true`;
//   - the producer's connection (no offline queue, one retry), the worker's (retries forever; BullMQ
//     duplicates it for the blocking fetch), the result publisher's (auto-pipelined on one Redis) and the
//     result subscriber's (retries forever) — on the cluster each an ioredis Cluster that re-reads the
//     slot map every 10 s, without auto-pipelining or an offline queue of its node connections;
//   - the result: the worker PUBLISHes `{id, ok, value}` on the classic channel `waveline:job-results`
//     (classic pub/sub on the cluster too: every process must hear it), which the waiting process has
//     SUBSCRIBEd once; the waiter registers before the job is added and gives up after 2 s
//     (docs/now-playing.md#responses, rule 9). Not BullMQ's QueueEvents.

export const QUEUE = 'ingest';
export const JOB_NAME = 'nowPlaying.follow';
export const RESULTS_CHANNEL = 'waveline:job-results';
/** How long an ingest waits for rundown following before answering `recorded` (rule 9). */
export const FOLLOW_WAIT_MS = 2000;
/** What every Waveline queue's jobs default to. */
export const DEFAULT_JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 24 * 3600, count: 5000 },
} as const;
/** The worker options of Waveline's `ingest` queue (16 jobs at once; WORKER_LOCK_SECONDS' default 30 s). */
export const WORKER_OPTIONS = { concurrency: 16, lockDuration: 30_000, stalledInterval: 30_000, maxStalledCount: 1 } as const;
const SLOTS_REFRESH_MS = 10_000;

/** Whether `redisArg` (a URL, or comma-separated cluster seed URLs) names a cluster. */
export const isCluster = (redisArg: string) => redisArg.split(',').length > 1;

/** The BullMQ prefix of the queue: the queue's hash tag on the cluster. */
export const queuePrefix = (redisArg: string) => (isCluster(redisArg) ? `waveline:bull:{${QUEUE}}` : 'waveline:bull');

/** A client as Waveline builds one for `redisArg` with these connection options. */
function client(redisArg: string, options: RedisOptions): Redis {
  if (!isCluster(redisArg)) return new Redis(redisArg, options);
  const { enableAutoPipelining: _batched, enableOfflineQueue: _queued, ...connection } = options;
  const nodes = redisArg.split(',').map((seed) => {
    const url = new URL(seed);
    return { host: url.hostname, port: Number(url.port || 6379) };
  });
  return new Cluster(nodes, { slotsRefreshInterval: SLOTS_REFRESH_MS, redisOptions: connection }) as unknown as Redis;
}

/** The producers' connection (a web process's, for every queue it adds jobs to). */
export const producerConnection = (redisArg: string) =>
  client(redisArg, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });

/** The workers' connection for their regular commands. */
export const workerConnection = (redisArg: string) => client(redisArg, { maxRetriesPerRequest: null });

/** The connection the worker reports results on (a process's command connection). */
export const resultPublisher = (redisArg: string) =>
  client(redisArg, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false, enableAutoPipelining: true });

/** The connection a web process hears results on (its subscriber). */
export const resultSubscriber = (redisArg: string) => client(redisArg, { maxRetriesPerRequest: null });
