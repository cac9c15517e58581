import { loadConfig } from '../../src/config.ts';
import { keys } from '../../src/lib/keys.ts';
import { clusterOf, createBlockingRedis, createCluster, type Redis } from '../../src/lib/redis.ts';

// A station's feed channel seen from a test, on one Redis (SUBSCRIBE, PUBSUB NUMSUB) or on a Redis
// Cluster (a sharded channel: SSUBSCRIBE through ioredis' sharded subscribers, PUBSUB SHARDNUMSUB on the
// masters), so the feed's tests run unchanged on both (docs/operations.md#tests-on-a-redis-cluster).

/** A connection that listens to stations' feed channels. */
export function feedListener(): {
  redis: Redis;
  subscribe(stationId: string): Promise<void>;
  onMessage(handler: (channel: string, message: string) => void): void;
  disconnect(): void;
} {
  const target = loadConfig().redis;
  const redis =
    target.kind === 'cluster'
      ? (createCluster(target.seeds, { maxRetriesPerRequest: null }, { shardedSubscribers: true }) as unknown as Redis)
      : createBlockingRedis(target);
  return {
    redis,
    subscribe: async (stationId) => {
      if (keys.sharded) await redis.ssubscribe(keys.feedChannel(stationId));
      else await redis.subscribe(keys.feedChannel(stationId));
    },
    onMessage: (handler) => redis.on(keys.sharded ? 'smessage' : 'message', handler),
    disconnect: () => redis.disconnect(),
  };
}

/** How many connections subscribe a station's feed channel (on a cluster: on every master). */
export async function feedSubscribers(redis: Redis, stationId: string): Promise<number> {
  const channel = keys.feedChannel(stationId);
  const cluster = clusterOf(redis);
  if (!cluster) return Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]);
  const counts = await Promise.all(
    cluster.nodes('master').map(async (node) => Number(((await node.pubsub('SHARDNUMSUB', channel)) as [string, number])[1])),
  );
  return counts.reduce((a, b) => a + b, 0);
}
