import { expect } from 'chai';
import { loadConfig } from '../../src/config.ts';
import { parseChange } from '../../src/lib/invalidation.ts';
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

  it('a change carries its commit LSN and a seed; a seed may hold anything, an @ or a newline included', () => {
    expect(parseChange('reads:st_1:nowPlaying')).to.deep.equal({ topic: 'reads', id: 'st_1:nowPlaying', lsn: undefined, seed: undefined });
    expect(parseChange('reads:st_1:nowPlaying@0/16B3748')).to.deep.equal({
      topic: 'reads',
      id: 'st_1:nowPlaying',
      lsn: '0/16B3748',
      seed: undefined,
    });
    const seed = JSON.stringify({ np: { track: { artist: 'a@b', title: 'line\nbreak' } } });
    expect(parseChange(`reads:st_1:nowPlaying@0/16B3748\n${seed}\nmore`)).to.deep.equal({
      topic: 'reads',
      id: 'st_1:nowPlaying',
      lsn: '0/16B3748',
      seed: `${seed}\nmore`,
    });
    // Topics without an LSN keep their id whole.
    expect(parseChange('operator-key:abc@def').id).to.equal('abc@def');
  });

  it('every process hears the seed its writer sent, the writer too', async function () {
    requiresRedis(this, 'two processes hearing Redis pub/sub');
    requiresSingleRedis(this, 'a slow TCP link in front of the one Redis address');
    const config = loadConfig();
    const logger = createLogger(config, 'test');
    const { writer, other, close } = await twoBuses((config.redis as { url: string }).url, 0, logger);
    try {
      const heard: Array<[string, string, string | undefined]> = [];
      // Only this test's ids: other processes on the same Redis publish theirs.
      writer.on('reads', (id, _lsn, seed) => id.startsWith('st:') && heard.push(['writer', id, seed]));
      other.on('reads', (id, _lsn, seed) => id.startsWith('st:') && heard.push(['other', id, seed]));
      await writer.invalidate('reads', 'st:nowPlaying', '{"v":[1,2]}');
      await writer.invalidate('reads', 'st:schedule');
      const deadline = Date.now() + 3000;
      while (heard.filter(([who]) => who === 'other').length < 2 && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 10));
      expect(heard.filter(([who]) => who === 'other')).to.deep.equal([
        ['other', 'st:nowPlaying', '{"v":[1,2]}'],
        ['other', 'st:schedule', undefined],
      ]);
      expect(heard.filter(([who]) => who === 'writer').slice(0, 2)).to.deep.equal([
        ['writer', 'st:nowPlaying', '{"v":[1,2]}'],
        ['writer', 'st:schedule', undefined],
      ]);
    } finally {
      await close();
    }
  });
});
