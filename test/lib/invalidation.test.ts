import { expect } from 'chai';
import { loadConfig } from '../../src/config.ts';
import { Invalidation } from '../../src/lib/invalidation.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createBlockingRedis, createRedis, type Redis } from '../../src/lib/redis.ts';
import { requiresRedis } from '../support/mode.ts';
import { slowLink } from '../support/slowLink.ts';

describe('cache invalidation across processes', () => {
  it('a station or credential change returns only once every other process dropped it (a revocation holds on the next read anywhere)', async function () {
    requiresRedis(this, 'two processes hearing Redis pub/sub, one of them through a slow link');
    const config = loadConfig();
    const logger = createLogger(config, 'test');
    const link = await slowLink(new URL(config.redisUrl), 300);
    const conns: Redis[] = [];
    const open = (url: string, blocking: boolean) => {
      const conn = blocking ? createBlockingRedis(url) : createRedis(url);
      conns.push(conn);
      return conn;
    };
    try {
      const writer = new Invalidation(open(config.redisUrl, false), open(config.redisUrl, true), logger);
      // The other process hears Redis 300 ms late.
      const other = new Invalidation(open(config.redisUrl, false), open(link.url, true), logger);
      await Promise.all([writer.start(), other.start()]);
      const dropped: string[] = [];
      other.on('credential', (id) => dropped.push(`credential:${id}`));
      other.on('reads', (id) => dropped.push(`reads:${id}`));

      const started = Date.now();
      await writer.invalidate('credential', 'hash-1');
      expect(dropped, 'dropped in the other process before the write answers').to.include('credential:hash-1');
      expect(Date.now() - started).to.be.below(1000);

      // Read caches are not confirmed (ingest must not wait for every process): they arrive a hop later.
      await writer.invalidate('reads', 'st:nowPlaying');
      expect(dropped).to.not.include('reads:st:nowPlaying');
    } finally {
      for (const conn of conns) conn.disconnect();
      await link.close();
    }
  });
});
