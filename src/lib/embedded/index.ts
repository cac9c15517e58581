import type { Config } from '../../config.ts';
import { startEmbeddedPostgres } from './postgres.ts';

/**
 * The embedded default for one process (`waveline dev`, `admin`, `migrate`): with DATABASE_URL unset,
 * starts PGlite on `<dataDir>/db` and returns the configuration pointing at it; `close()` stops it (after
 * everything that uses it). With DATABASE_URL set, returns the configuration as it is. REDIS_URL unset
 * needs nothing started: src/lib/redis.ts and src/lib/queue.ts give the in-process adapters.
 */
export async function openEmbedded(config: Readonly<Config>): Promise<{ config: Readonly<Config>; close(): Promise<void> }> {
  if (config.databaseUrl) return { config, close: async () => undefined };
  const postgres = await startEmbeddedPostgres(config.dataDir);
  return { config: Object.freeze({ ...config, databaseUrl: postgres.url }), close: () => postgres.close() };
}
