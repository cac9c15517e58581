import { expect } from 'chai';
import { loadConfig, type RedisTarget } from '../../../src/config.ts';
import { FeedBridge } from '../../../src/gateway/bridge.ts';
import { FeedStore } from '../../../src/gateway/store.ts';
import { useRedisNames } from '../../../src/lib/keys.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import type { Cluster } from '../../../src/lib/redis.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { closeNodes, failover, feedSlot, ownerOf, restoreCluster, SEEDS, startClusterRole, type ClusterRole } from './support.ts';

// The gateway's Redis side on a cluster reads the slot map again shortly after a master drops one of its
// station channels (src/gateway/bridge.ts): ioredis' own read comes from a random node, which may not
// know the new owner yet. Last of the cluster files: its CLUSTER FAILOVER leaves a topology the others do
// not expect (a replica cut off from its master for long refuses to take over when that master is killed).

describe('Redis Cluster: the gateway re-reads the slot map after a dropped channel', function () {
  this.timeout(120_000);
  const target: RedisTarget = { kind: 'cluster', seeds: SEEDS.split(',') };
  let web: ClusterRole;

  before(async () => {
    await restoreCluster();
    useRedisNames(target);
    web = await startClusterRole('web');
  });

  after(async () => {
    await web?.stop();
    useRedisNames(loadConfig().redis);
    await restoreCluster().catch(() => undefined);
    closeNodes();
  });

  it("reads the slot map again 0.5 s and 2 s after a master drops a station's channel (its first read may be stale)", async () => {
    // A bridge in this process, so its client's slot-map reads can be counted.
    const logger = createLogger(loadConfig(), 'scale-test');
    const store = new FeedStore(loadConfig().databaseUrl, logger);
    const bridge = new FeedBridge(target, store, { change() {}, delayedChange() {}, stationChanged() {}, resubscribed() {} }, logger);
    try {
      await bridge.start();
      const station = await createStation(web.url, { id: `st-confirm-${Date.now().toString(36)}` });
      await bridge.acquire(station.id);
      const slot = feedSlot(station.id);
      const owner = await ownerOf(slot);
      await eventually(() => bridge.shardSubscriptions()[0]?.node === `127.0.0.1:${owner}`);
      const reads: number[] = [];
      (bridge as unknown as { cluster: Cluster }).cluster.on('refresh', () => reads.push(Date.now()));
      // The demoted master drops the channel with an unsolicited SUNSUBSCRIBE (demoted.scale.ts).
      const promoted = await failover(owner, slot);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      // ioredis' own read at once, then the bridge's two; the backstop reads only every 5 s.
      expect(reads.length, 'slot-map reads within 2.5 s of the failover').to.be.at.least(3);
      await eventually(() => bridge.shardSubscriptions()[0]?.node === `127.0.0.1:${promoted}`, { timeoutMs: 5000 });
    } finally {
      await bridge.close();
      await store.close();
    }
  });
});
