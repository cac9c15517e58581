import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Invalidation } from '../../src/lib/invalidation.ts';
import type { Logger } from '../../src/lib/logger.ts';
import { createBlockingRedis, createRedis, type Redis } from '../../src/lib/redis.ts';

// A process that hears Redis late: the cross-process invalidation tests give one of two buses this link.

/** Forwards to Redis, holding everything Redis sends back for `delayMs`: a process that hears pub/sub late. */
export async function slowLink(target: URL, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
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

/**
 * Two invalidation buses as two processes would hold them, on the one Redis of `redisUrl`: `writer`
 * hears Redis at once, `other` through a slow link of `delayMs`. `close` disconnects both and the link.
 */
export async function twoBuses(
  redisUrl: string,
  delayMs: number,
  logger: Logger,
): Promise<{ writer: Invalidation; other: Invalidation; close(): Promise<void> }> {
  const link = await slowLink(new URL(redisUrl), delayMs);
  const conns: Redis[] = [];
  const open = (url: string, blocking: boolean) => {
    const target = { kind: 'single', url } as const;
    const conn = blocking ? createBlockingRedis(target) : createRedis(target);
    conns.push(conn);
    return conn;
  };
  const writer = new Invalidation(open(redisUrl, false), open(redisUrl, true), logger);
  const other = new Invalidation(open(redisUrl, false), open(link.url, true), logger);
  const close = async () => {
    for (const conn of conns) conn.disconnect();
    await link.close();
  };
  try {
    await Promise.all([writer.start(), other.start()]);
  } catch (err) {
    await close();
    throw err;
  }
  return { writer, other, close };
}
