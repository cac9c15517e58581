import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../config.ts';
import { MemoryRedis } from './embedded/memoryRedis.ts';

export type { Redis, Cluster };

// The Redis clients of every process, built from the configured target (src/config.ts, RedisTarget):
// - memory (neither REDIS_URL nor REDIS_CLUSTER_URLS: the embedded default): this process' in-memory store
//   (src/lib/embedded/memoryRedis.ts) with the same surface for the commands Waveline sends;
// - single (REDIS_URL): one ioredis connection;
// - cluster (REDIS_CLUSTER_URLS): an ioredis Cluster client, which routes each command to the master
//   owning its slot and follows MOVED/ASK redirections, slot moves and failovers by itself.
// The Cluster client answers the same commands as a connection (the names of src/lib/keys.ts keep every
// command inside one slot), so it is handed on typed as `Redis`; code that must tell them apart asks
// `clusterOf`.

const memory = (): Redis => new MemoryRedis() as unknown as Redis;

/**
 * How often a cluster client re-reads the slot map with no sign of a change. ioredis re-reads it by itself
 * after a MOVED (having sent the command on to the new owner), a CLUSTERDOWN or TRYAGAIN, and a node's
 * connection lost, so a command client follows reshards and failovers without it; the timer only catches
 * what no command met. Each read opens a new connection to a node for CLUSTER SLOTS and rebuilds the
 * 16 384-slot map: every second, on each of a process' clients, it was most of a cluster client's idle CPU
 * (docs/benchmarks.md#redis-cluster-and-read-replicas). The gateway's subscriber reads more often
 * (src/gateway/bridge.ts: no command of its own meets a MOVED).
 */
export const SLOTS_REFRESH_MS = 10_000;

/** The seed URLs as ioredis' startup nodes, and the options (credentials, TLS) every node connection shares. */
export function clusterSeeds(seeds: string[]): { nodes: Array<{ host: string; port: number }>; redisOptions: RedisOptions } {
  const nodes = seeds.map((seed) => {
    const url = new URL(seed);
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379) };
  });
  const first = new URL(seeds[0]);
  const redisOptions: RedisOptions = {};
  if (first.username) redisOptions.username = decodeURIComponent(first.username);
  if (first.password) redisOptions.password = decodeURIComponent(first.password);
  if (first.protocol === 'rediss:') redisOptions.tls = {};
  return { nodes, redisOptions };
}

/** A cluster client whose node connections take `options` (connection-level) on top of the seeds' credentials. */
export function createCluster(seeds: string[], options: RedisOptions = {}, clusterOptions: ClusterOptions = {}): Cluster {
  const { nodes, redisOptions } = clusterSeeds(seeds);
  // No auto-pipelining on a cluster. ioredis batches the commands of one turn by the nodes serving their
  // slot, not by slot, and re-sends a batch after MOVED or ASK only when every failed command got the
  // same redirection and every other command of the batch is read-only; otherwise each command gets its
  // own answer, the redirection included. During a slot move a batch mixing that slot with another of the
  // same master, a write beside a redirected command, or keys of the slot already migrated (ASK) beside
  // keys not yet migrated, would each surface MOVED or ASK to the caller (test/scale/redis/errors.scale.ts
  // met it as a 500). Batching per slot would not remove the last two.
  // Nor a cluster without its offline queue: its ready check goes through it while the node connections
  // are replaced (every seed a replica after failovers), and without it the client never became ready.
  // Commands still fail fast: each node connection gives up after its own retries.
  const { enableAutoPipelining: _batched, enableOfflineQueue: _queued, ...connection } = options;
  return new Cluster(nodes, {
    slotsRefreshInterval: SLOTS_REFRESH_MS,
    ...clusterOptions,
    redisOptions: { ...redisOptions, ...connection, ...clusterOptions.redisOptions },
  });
}

/** A command connection that fails fast (web requests must not hang on a dead Redis). */
export function createRedis(target: RedisTarget, options: RedisOptions = {}): Redis {
  if (target.kind === 'memory') return memory();
  const settings: RedisOptions = { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false, ...options };
  if (target.kind === 'cluster') return createCluster(target.seeds, settings) as unknown as Redis;
  return new Redis(target.url, settings);
}

/** A connection for BullMQ workers and subscribers: blocking commands must retry forever. */
export function createBlockingRedis(target: RedisTarget, options: RedisOptions = {}): Redis {
  if (target.kind === 'memory') return memory();
  const settings: RedisOptions = { maxRetriesPerRequest: null, ...options };
  if (target.kind === 'cluster') return createCluster(target.seeds, settings) as unknown as Redis;
  return new Redis(target.url, settings);
}

/** The cluster client behind a `Redis` of createRedis, or null for one Redis (or the in-memory store). */
export function clusterOf(redis: Redis): Cluster | null {
  return (redis as unknown as { isCluster?: boolean }).isCluster === true ? (redis as unknown as Cluster) : null;
}

/**
 * PUBLISH, answering how many subscribers received it. On a cluster a classic message reaches the
 * subscribers of every node, but PUBLISH counts only those of the node it ran on: there the answer is
 * the subscribers of `channel` on every node (PUBSUB NUMSUB), counted just before publishing.
 */
export async function publishCounted(redis: Redis, channel: string, message: string): Promise<number> {
  const cluster = clusterOf(redis);
  if (!cluster) return redis.publish(channel, message);
  const counts = await Promise.all(
    cluster.nodes('all').map((node) =>
      node.pubsub('NUMSUB', channel).then(
        (answer) => Number((answer as [string, number])[1] ?? 0),
        () => 0,
      ),
    ),
  );
  await cluster.publish(channel, message);
  return counts.reduce((a, b) => a + b, 0);
}
