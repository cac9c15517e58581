import './env.ts';
import pg from 'pg';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.ts';
import { migrate } from '../../src/roles/migrate.ts';
import { stopAllServers } from './server.ts';

// Root hooks: a fresh database and Redis index per run, migrated once; every server closed at the end.

async function recreateDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}

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
