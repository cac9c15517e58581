import { Redis, type RedisOptions } from 'ioredis';
import { MemoryRedis } from './embedded/memoryRedis.ts';

export type { Redis };

// An empty URL (REDIS_URL unset: the embedded default) gives a connection to this process' in-memory
// store (src/lib/embedded/memoryRedis.ts) with the same surface for the commands Waveline sends.
const memory = (): Redis => new MemoryRedis() as unknown as Redis;

/** A command connection that fails fast (web requests must not hang on a dead Redis). */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  if (!url) return memory();
  return new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false, ...options });
}

/** A connection for BullMQ workers and subscribers: blocking commands must retry forever. */
export function createBlockingRedis(url: string, options: RedisOptions = {}): Redis {
  if (!url) return memory();
  return new Redis(url, { maxRetriesPerRequest: null, ...options });
}
