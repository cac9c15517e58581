import { expect } from 'chai';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { sharedServer } from '../support/server.ts';
import { testMode } from '../support/mode.ts';
import { isMemoryRedis } from '../../src/lib/embedded/memoryRedis.ts';

// Proof that a run really uses the adapters its mode names (docs/embedded.md, "Tests").
describe('test mode', () => {
  it('runs on the adapters of its mode: PGlite in a temporary directory and in-process Redis when embedded, servers otherwise', async () => {
    const { svc } = await sharedServer();
    const version = (await svc.db.raw<{ rows: Array<{ version: string }> }>('SELECT version()')).rows[0].version;
    if (testMode() === 'embedded') {
      expect(version).to.include('PGlite');
      expect(svc.config.redis).to.deep.equal({ kind: 'memory' });
      expect(isMemoryRedis(svc.redis)).to.equal(true);
      expect(resolve(svc.config.dataDir).startsWith(resolve(tmpdir())), "never the repository's .waveline").to.equal(true);
    } else {
      expect(version).not.to.include('PGlite');
      expect(svc.config.redis.kind).to.be.oneOf(['single', 'cluster']);
      expect(isMemoryRedis(svc.redis)).to.equal(false);
    }
  });
});
