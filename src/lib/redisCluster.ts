import { clusterOf, type Redis } from './redis.ts';

// The state of a Redis Cluster as one process sees it, for /readyz (web, worker) and the metrics of
// src/lib/redisCluster/metrics.ts (docs/operations.md#redis-cluster).

export interface ClusterHealth {
  /** `cluster_state` of CLUSTER INFO: `ok`, or `fail` while a slot has no reachable master. */
  state: string;
  /** Masters in the client's view of the cluster. */
  masters: number;
  /** Those answering PING within the probe's time. */
  mastersReachable: number;
}

const PROBE_TIMEOUT_MS = 2000;

const within = <T>(probe: Promise<T>): Promise<T> =>
  Promise.race([probe, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS).unref())]);

/** The cluster's health, or null when `redis` is not a cluster client. */
export async function clusterHealth(redis: Redis): Promise<ClusterHealth | null> {
  const cluster = clusterOf(redis);
  if (!cluster) return null;
  const masters = cluster.nodes('master');
  const [info, pings] = await Promise.all([
    within(cluster.cluster('INFO')).then(String, () => ''),
    Promise.all(
      masters.map((node) =>
        within(node.ping()).then(
          () => true,
          () => false,
        ),
      ),
    ),
  ]);
  return {
    state: /cluster_state:(\w+)/.exec(info)?.[1] ?? 'unknown',
    masters: masters.length,
    mastersReachable: pings.filter(Boolean).length,
  };
}
