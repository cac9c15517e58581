import { expect } from 'chai';
import { Redis } from 'ioredis';
import { eventually } from '../../support/factories.ts';
import { closeNodes, failover, feedSlot, node, ownerOf, restoreCluster } from './support.ts';

// Redis 7.0 releases before the fix could leave a node that stopped serving a slot with its shard-channel
// subscriptions (fixed upstream in 7.2 and in later 7.0 patches). The gateway does not rely on either
// behaviour — it follows the slot's owner and catches up (delivery.scale.ts) — but what the server here
// does is shown, not assumed: a master demoted by CLUSTER FAILOVER drops its subscribers' shard channels
// with an unsolicited SUNSUBSCRIBE.

describe('Redis Cluster: a demoted master and its shard-channel subscriptions', function () {
  this.timeout(60_000);
  const subs: Redis[] = [];

  before(() => restoreCluster());
  after(async () => {
    for (const sub of subs) sub.disconnect();
    await restoreCluster();
    closeNodes();
  });

  it('drops them (unsolicited SUNSUBSCRIBE; SHARDNUMSUB 0 there) once it is a replica', async () => {
    const stationId = `st-demoted-${Date.now().toString(36)}`;
    const channel = `waveline:feed:{${stationId}}`;
    const slot = feedSlot(stationId);
    const owner = await ownerOf(slot);
    const sub = new Redis({ host: '127.0.0.1', port: owner });
    subs.push(sub);
    let unsubscribed = 0;
    sub.on('moved', () => unsubscribed++);
    await sub.ssubscribe(channel);
    expect(((await node(owner).call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1]).to.equal(1);

    await failover(owner, slot);
    await eventually(async () => ((await node(owner).call('ROLE')) as string[])[0] === 'slave');
    await eventually(() => unsubscribed === 1);
    expect(((await node(owner).call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1]).to.equal(0);
    process.stderr.write(`      redis-server ${String(await node(owner).info('server')).match(/redis_version:(\S+)/)?.[1]}\n`);
  });
});
