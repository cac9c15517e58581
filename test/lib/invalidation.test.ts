import { expect } from 'chai';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { requiresRedis, requiresSingleRedis } from '../support/mode.ts';
import { twoBuses } from '../support/slowLink.ts';

describe('cache invalidation across processes', () => {
  it('a station or credential change returns only once every other process dropped it (a revocation holds on the next read anywhere)', async function () {
    requiresRedis(this, 'two processes hearing Redis pub/sub, one of them through a slow link');
    requiresSingleRedis(this, 'a slow TCP link in front of the one Redis address');
    const config = loadConfig();
    const redisUrl = (config.redis as { url: string }).url;
    const logger = createLogger(config, 'test');
    // The other process hears Redis 300 ms late.
    const { writer, other, close } = await twoBuses(redisUrl, 300, logger);
    try {
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
      await close();
    }
  });
});
