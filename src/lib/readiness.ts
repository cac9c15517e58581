import type { Db } from './db.ts';
import type { Redis } from './redis.ts';
import { clusterHealth, type ClusterHealth } from './redisCluster.ts';

/** How long a readiness probe waits for each dependency before calling it down. */
const PROBE_TIMEOUT_MS = 2000;

const answers = <T>(probe: Promise<T>): Promise<boolean> =>
  Promise.race([probe, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS).unref())]).then(
    () => true,
    () => false,
  );

/**
 * Whether Postgres and Redis each answer within 2 s: the `/readyz` of web and of the worker port. On a
 * Redis Cluster, Redis answers when the cluster is ok (every slot has a master) and every master answers;
 * `redisCluster` then says what it sees.
 */
export async function dependenciesAnswer(svc: {
  db: Db;
  redis: Redis;
}): Promise<{ postgres: boolean; redis: boolean; redisCluster?: ClusterHealth }> {
  const [postgres, redis, cluster] = await Promise.all([
    answers(svc.db.raw('select 1')),
    answers(svc.redis.ping()),
    clusterHealth(svc.redis).catch(() => null),
  ]);
  if (!cluster) return { postgres, redis };
  return { postgres, redis: redis && cluster.state === 'ok' && cluster.mastersReachable === cluster.masters, redisCluster: cluster };
}
