import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { Invalidation } from '../../src/lib/invalidation.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { ReadCache, Representation } from '../../src/lib/readCache.ts';
import { createBlockingRedis, createRedis } from '../../src/lib/redis.ts';
import { formatLsn, parseLsn, ReadRouting, replicaName, WalPosition, writtenUpTo } from '../../src/lib/replicas/routing.ts';
import { eventually } from '../support/factories.ts';
import { requiresRedis, requiresSingleRedis } from '../support/mode.ts';
import { twoBuses } from '../support/slowLink.ts';

// Read replicas (docs/operations.md#postgres-read-replicas): what does not need a replica to show. The
// routing on a real streaming replica is tested by `npm run test:scale` (test/scale/replicas/).

const logger = createLogger(loadConfig(), 'test');

/** A routing with no replica: it only remembers the LSNs heard (every read on the primary). */
function lsnsOnly(): ReadRouting<string> {
  return new ReadRouting<string>({ primary: 'primary', replicas: [], maxLagSeconds: 10, logger, primaryPosition: async () => '0/0' });
}

describe('read replicas', () => {
  it('LSNs compare as numbers; a replica is named by host:port, never with its password', () => {
    expect(parseLsn('0/3016038')).to.equal(0x3016038n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).to.equal(true);
    expect(formatLsn(parseLsn('A/3016038'))).to.equal('A/3016038');
    expect(replicaName('postgres://reader:s3cret@db-replica-1.internal:5433/waveline')).to.equal('db-replica-1.internal:5433');
    expect(replicaName('postgres://reader:s3cret@db-replica-2.internal/waveline')).to.equal('db-replica-2.internal:5432');
  });

  it("a write's position: the primary's insert position (right after a page header: the page boundary), asked after the caller's commit", async () => {
    expect(writtenUpTo(parseLsn('0/3016018'))).to.equal(parseLsn('0/3016000'));
    expect(writtenUpTo(parseLsn('0/3016020'))).to.equal(parseLsn('0/3016020'));
    // A caller arriving while a question is out waits for the next one (the one out may predate its commit).
    const answers = ['0/100', '0/200', '0/4018'];
    const asked: Array<(value: Array<Record<string, unknown>>) => void> = [];
    const position = new WalPosition(() => new Promise((ok) => asked.push(ok)));
    const first = position.read();
    const second = position.read();
    const third = position.read();
    expect(asked).to.have.length(1);
    asked[0]([{ lsn: answers[0] }]);
    expect(await first).to.equal('0/100');
    await eventually(() => asked.length === 2);
    asked[1]([{ lsn: answers[1] }]);
    expect(await second).to.equal('0/200');
    expect(await third, 'callers of one moment share the next question').to.equal('0/200');
    const fourth = position.read();
    await eventually(() => asked.length === 3);
    asked[2]([{ lsn: answers[2] }]);
    expect(await fourth).to.equal('0/4000');
  });

  it('DATABASE_REPLICA_URLS: comma-separated Postgres URLs beside a DATABASE_URL; a bad entry is named without echoing it', () => {
    const primary = 'postgres://app@db:5432/waveline';
    expect(loadConfig({ DATABASE_URL: primary }).databaseReplicaUrls).to.deep.equal([]);
    expect(loadConfig({ DATABASE_URL: primary }).databaseReplicaMaxLagSeconds).to.equal(10);
    const config = loadConfig({
      DATABASE_URL: primary,
      DATABASE_REPLICA_URLS: ' postgres://r@replica-a:5432/waveline , postgresql://r@replica-b/waveline ',
      DATABASE_REPLICA_MAX_LAG_SECONDS: '3',
    });
    expect(config.databaseReplicaUrls).to.deep.equal(['postgres://r@replica-a:5432/waveline', 'postgresql://r@replica-b/waveline']);
    expect(config.databaseReplicaMaxLagSeconds).to.equal(3);
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://r@replica-a/waveline' })).to.throw(ConfigError, /needs DATABASE_URL/);
    let message = '';
    try {
      loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'postgres://r@a/w,mysql://root:hunter2@b/w' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.match(/DATABASE_REPLICA_URLS: entry 2/);
    expect(message).to.not.include('hunter2');
    expect(() => loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_MAX_LAG_SECONDS: '0' })).to.throw(ConfigError, /MAX_LAG/);
  });

  it('a process remembers the newest LSN heard per station; a read of several stations needs the newest of all', () => {
    const routing = lsnsOnly();
    try {
      routing.heard('st_a', '0/200');
      routing.heard('st_a', '0/100'); // older: ignored
      routing.heard('st_b', '0/300');
      expect(routing.requiredLsn('st_a')).to.equal(0x200n);
      expect(routing.requiredLsn('st_b')).to.equal(0x300n);
      expect(routing.requiredLsn('st_c')).to.equal(0n);
      expect(routing.requiredLsn(null)).to.equal(0x300n);
      expect(routing.keeps('st_a', 0x1ffn)).to.equal(false);
      expect(routing.keeps('st_a', 0x200n)).to.equal(true);
      expect(routing.keeps('st_a', undefined), 'an answer read on the primary').to.equal(true);
    } finally {
      routing.close();
    }
  });

  it('after a reconnection a process reads nothing older than what the primary had written by then (it may have missed positions)', async () => {
    let primary = '0/100';
    const routing = new ReadRouting<string>({
      primary: 'primary',
      replicas: [],
      maxLagSeconds: 10,
      logger,
      primaryPosition: async () => primary,
    });
    try {
      await eventually(() => routing.requiredLsn('st_a') === 0x100n, { timeoutMs: 2000 }); // the start floor
      routing.heard('st_a', '0/200');
      primary = '0/900';
      await routing.raiseFloor();
      expect(routing.requiredLsn('st_a')).to.equal(0x900n);
      expect(routing.requiredLsn('st_never_heard')).to.equal(0x900n);
      expect(routing.requiredLsn(null)).to.equal(0x900n);
      routing.heard('st_a', '0/A00');
      expect(routing.requiredLsn('st_a')).to.equal(0xa00n);
    } finally {
      routing.close();
    }
  });

  it('an invalidation bus tells when its subscriber connection came back', async function () {
    requiresRedis(this, 'a real Redis connection to cut');
    requiresSingleRedis(this, 'a connection killed by hand on the one Redis address');
    const config = loadConfig();
    const name = `waveline-test-invalidation-${process.pid}-${Date.now()}`;
    const publisher = createRedis(config.redis);
    const subscriber = createBlockingRedis(config.redis, { connectionName: name, retryStrategy: () => 50 });
    const admin = createRedis(config.redis);
    try {
      const bus = new Invalidation(publisher, subscriber, logger);
      await bus.start();
      let reconnects = 0;
      bus.onReconnect(() => reconnects++);
      const list = String(await admin.client('LIST'));
      const id = /id=(\d+) [^\n]*name=([^ ]+)/g;
      let found: string | undefined;
      for (const m of list.matchAll(id)) if (m[2] === name) found = m[1];
      expect(found, 'the subscriber connection').to.be.a('string');
      await admin.client('KILL', 'ID', found!);
      await eventually(() => reconnects === 1, { timeoutMs: 5000 });
    } finally {
      for (const conn of [publisher, subscriber, admin]) conn.disconnect();
    }
  });

  it('the read cache keeps no answer read on a replica older than a write heard for its station meanwhile, whatever its area', async () => {
    const routing = lsnsOnly();
    const cache = new ReadCache(1 << 20, 60_000, undefined, routing);
    try {
      const now = Date.now();
      routing.heard('st_a', '0/100');
      // Read at 0/100 (what the station needed): kept.
      await cache.read('k1', 'st_a', 'content', now, async (basis) => {
        basis.lsn = 0x100n;
        return Representation.json({ v: 1 });
      });
      expect(cache.peek('k1', now)).to.not.equal(undefined);
      // A write of another area of the station is heard while the read runs on a replica at 0/100: not kept.
      await cache.read('k2', 'st_a', 'content', now, async (basis) => {
        basis.lsn = 0x100n;
        routing.heard('st_a', '0/180');
        return Representation.json({ v: 2 });
      });
      expect(cache.peek('k2', now)).to.equal(undefined);
      // The same on the primary (no basis LSN): kept.
      await cache.read('k3', 'st_a', 'content', now, async () => {
        routing.heard('st_a', '0/190');
        return Representation.json({ v: 3 });
      });
      expect(cache.peek('k3', now)).to.not.equal(undefined);
      // GraphQL stores whole responses with the LSN they were read at.
      cache.store('k4', 'st_a', ['content'], cache.generation('st_a'), Representation.json({ v: 4 }), now, 0x150n);
      expect(cache.peek('k4', now)).to.equal(undefined);
      cache.store('k5', 'st_a', ['content'], cache.generation('st_a'), Representation.json({ v: 5 }), now, 0x190n);
      expect(cache.peek('k5', now)).to.not.equal(undefined);
    } finally {
      routing.close();
    }
  });

  it("with replicas, a listener read's invalidation carries the write's LSN and returns only once every other process heard it", async function () {
    requiresRedis(this, 'two processes hearing Redis pub/sub, one of them through a slow link');
    requiresSingleRedis(this, 'a slow TCP link in front of the one Redis address');
    const config = loadConfig();
    const redisUrl = (config.redis as { url: string }).url;
    const { writer, other, close } = await twoBuses(redisUrl, 300, logger);
    try {
      writer.carryLsn(async () => '0/ABC0');
      const heardHere: Array<[string, string | undefined]> = [];
      const heardThere: Array<[string, string | undefined]> = [];
      writer.on('reads', (id, lsn) => heardHere.push([id, lsn]));
      other.on('reads', (id, lsn) => heardThere.push([id, lsn]));
      other.on('station', (id, lsn) => heardThere.push([id, lsn]));

      await writer.invalidate('reads', 'st_x:content');
      expect(heardHere[0], 'the writing process knows it at once').to.deep.equal(['st_x:content', '0/ABC0']);
      expect(heardThere, 'heard in the other process before the write answers').to.deep.include(['st_x:content', '0/ABC0']);
      await writer.invalidate('station', 'st_y');
      expect(heardThere).to.deep.include(['st_y', '0/ABC0']);
    } finally {
      await close();
    }
  });
});
