import { expect } from 'chai';
import { createServer, type Server } from 'node:net';
import { checkRedisCluster, StartupError } from '../../src/lib/startup.ts';
import { clusterSeeds } from '../../src/lib/redis.ts';
import { keys, useRedisNames } from '../../src/lib/keys.ts';
import { keySlot } from '../../src/lib/slot.ts';
import { loadConfig } from '../../src/config.ts';

// The Redis target's pieces that need no cluster: the start-up check of REDIS_CLUSTER_URLS, the seeds'
// parsing, the two styles of names and the slot function (checked against CLUSTER KEYSLOT in
// test/scale/redis/queues.scale.ts).

describe('Redis target: one Redis or a cluster', () => {
  after(() => useRedisNames(loadConfig().redis));

  it('a cluster that does not answer stops the start with one line naming REDIS_CLUSTER_URLS (password masked)', async () => {
    const silent: Server = createServer(() => undefined).listen(0, '127.0.0.1');
    await new Promise((resolve) => silent.once('listening', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const err = await checkRedisCluster([`redis://:s3cret@127.0.0.1:${port}`], 500).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(StartupError);
      expect((err as Error).message).to.match(/^cannot reach the Redis Cluster at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+.*REDIS_CLUSTER_URLS/);
      expect((err as Error).message).not.to.include('s3cret');
    } finally {
      silent.close();
    }
  });

  it('reads host, port, credentials and TLS from the seeds', () => {
    expect(clusterSeeds(['rediss://user:p%40ss@10.0.0.1:7000', 'redis://10.0.0.2'])).to.deep.equal({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
      ],
      redisOptions: { username: 'user', password: 'p@ss', tls: {} },
    });
  });

  it('keeps the names of one Redis as they were, and gives a cluster station hash tags and a tag per queue', () => {
    useRedisNames({ kind: 'single', url: 'redis://127.0.0.1:6379/0' });
    expect([
      keys.sharded,
      keys.feedChannel('st_a'),
      keys.scheduleTimers('st_a'),
      keys.queuePrefix('ingest'),
      keys.pushPaceBucket('st_a'),
    ]).to.deep.equal([false, 'waveline:feed:st_a', 'waveline:schedule:timers:st_a', 'waveline:bull', 'st_a']);
    useRedisNames({ kind: 'cluster', seeds: ['redis://127.0.0.1:7101'] });
    expect([
      keys.sharded,
      keys.feedChannel('st_a'),
      keys.scheduleTimers('st_a'),
      keys.queuePrefix('ingest'),
      keys.pushPaceBucket('st_a'),
    ]).to.deep.equal([true, 'waveline:feed:{st_a}', 'waveline:schedule:timers:{st_a}', 'waveline:bull:{ingest}', '{st_a}']);
    expect(keySlot(keys.feedChannel('st_a'))).to.equal(keySlot(keys.scheduleTimers('st_a')));
    // Known answers of CLUSTER KEYSLOT.
    expect([keySlot('foo'), keySlot('{default}'), keySlot('a{}b')]).to.deep.equal([12182, 5718, 13694]);
  });
});
