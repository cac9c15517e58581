import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createRedis, publishCounted, type Redis as Client } from '../../../src/lib/redis.ts';
import { eventually } from '../../support/factories.ts';
import { closeNodes, masters, restoreCluster, SEEDS } from './support.ts';

// A confirmed invalidation (src/lib/invalidation.ts) waits for as many acknowledgements as processes
// heard it. On a cluster a classic message reaches the subscribers of every node, but PUBLISH counts only
// those of the node it ran on: the count is taken on every node instead (docs/operations.md#names-on-redis-cluster).

describe('Redis Cluster: classic pub/sub counts every node', function () {
  this.timeout(60_000);
  let publisher: Client;
  const subscribers: Redis[] = [];

  before(async () => {
    await restoreCluster();
    publisher = createRedis({ kind: 'cluster', seeds: SEEDS.split(',') });
  });

  after(() => {
    publisher?.disconnect();
    for (const s of subscribers) s.disconnect();
    closeNodes();
  });

  it('publishCounted answers the subscribers of the channel on all nodes, as many as receive it', async () => {
    const channel = `waveline:test:counted:${Date.now()}`;
    const received: number[] = [];
    // One subscriber on each master, as processes whose cluster clients picked different nodes.
    for (const port of await masters()) {
      const sub = new Redis({ host: '127.0.0.1', port });
      subscribers.push(sub);
      await sub.subscribe(channel);
      sub.on('message', () => received.push(port));
    }
    const counted = await publishCounted(publisher, channel, 'hello');
    await eventually(() => received.length === 3);
    expect(counted).to.equal(3);
    // What PUBLISH alone answers: the subscribers of one node.
    expect(await publisher.publish(channel, 'again')).to.be.at.most(1);
  });
});
