import { expect } from 'chai';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config.ts';
import { Invalidation } from '../../src/lib/invalidation.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createBlockingRedis, createRedis, type Redis } from '../../src/lib/redis.ts';
import { requiresRedis, requiresSingleRedis } from '../support/mode.ts';

/** Forwards to Redis, holding everything Redis sends back for `delayMs`: a process that hears pub/sub late. */
async function slowLink(target: URL, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream);
    upstream.on('data', (chunk) => setTimeout(() => client.writable && client.write(chunk), delayMs));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => setTimeout(() => client.destroy(), delayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: url.toString(),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('cache invalidation across processes', () => {
  it('a station or credential change returns only once every other process dropped it (a revocation holds on the next read anywhere)', async function () {
    requiresRedis(this, 'two processes hearing Redis pub/sub, one of them through a slow link');
    requiresSingleRedis(this, 'a slow TCP link in front of the one Redis address');
    const config = loadConfig();
    const redisUrl = (config.redis as { url: string }).url;
    const logger = createLogger(config, 'test');
    const link = await slowLink(new URL(redisUrl), 300);
    const conns: Redis[] = [];
    const open = (url: string, blocking: boolean) => {
      const target = { kind: 'single', url } as const;
      const conn = blocking ? createBlockingRedis(target) : createRedis(target);
      conns.push(conn);
      return conn;
    };
    try {
      const writer = new Invalidation(open(redisUrl, false), open(redisUrl, true), logger);
      // The other process hears Redis 300 ms late.
      const other = new Invalidation(open(redisUrl, false), open(link.url, true), logger);
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
