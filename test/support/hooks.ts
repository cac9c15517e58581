import './env.ts';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.ts';
import { migrate } from '../../src/roles/migrate.ts';
import { recreateDatabase } from '../../src/lib/migrate.ts';
import { stopAllServers } from './server.ts';

// Root hooks: a fresh database and Redis index per run, migrated once; every server closed at the end.

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    const config = loadConfig();
    await recreateDatabase(config.databaseUrl);
    await migrate(config);
    const redis = new Redis(config.redisUrl);
    await redis.flushdb();
    redis.disconnect();
  },
  async afterAll() {
    await stopAllServers();
  },
};
