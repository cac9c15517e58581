import { gauge } from '../metrics.ts';
import type { ClusterHealth } from '../redisCluster.ts';

// A Redis Cluster's health as this process sees it, read at scrape time from the source the process
// registers (src/roles/services.ts, on a cluster only): no series on one Redis (docs/operations.md, "Metrics").

let source: (() => Promise<ClusterHealth | null>) | null = null;

/** A process on a Redis Cluster registers where its health comes from (read at scrape time). */
export function setClusterHealthSource(next: (() => Promise<ClusterHealth | null>) | null): void {
  source = next;
}

gauge({
  name: 'waveline_redis_cluster_ok',
  help: 'On a Redis Cluster: 1 when CLUSTER INFO answers cluster_state:ok (every slot has a master), else 0; no series on one Redis.',
  async collect() {
    this.reset();
    const health = source ? await source().catch(() => null) : null;
    if (health) this.set(health.state === 'ok' ? 1 : 0);
  },
});

gauge({
  name: 'waveline_redis_cluster_masters',
  help: 'On a Redis Cluster: its masters as this process sees them, by whether they answer PING (reachable true or false).',
  labelNames: ['reachable'] as const,
  async collect() {
    this.reset();
    const health = source ? await source().catch(() => null) : null;
    if (!health) return;
    this.set({ reachable: 'true' }, health.mastersReachable);
    this.set({ reachable: 'false' }, health.masters - health.mastersReachable);
  },
});
