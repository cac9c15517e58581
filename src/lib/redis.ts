import { Redis, type RedisOptions } from 'ioredis';

export type { Redis };

/** A command connection that fails fast (web requests must not hang on a dead Redis). */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false, ...options });
}

/** A connection for BullMQ workers and subscribers: blocking commands must retry forever. */
export function createBlockingRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, ...options });
}
