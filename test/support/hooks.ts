import './env.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { migrate } from '../../src/roles/migrate.ts';
import { recreateDatabase } from '../../src/lib/migrate.ts';
import { clusterOf, createRedis } from '../../src/lib/redis.ts';
import { useRedisNames } from '../../src/lib/keys.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/lib/embedded/postgres.ts';
import { stopAllServers } from './server.ts';
import { detectTestMode } from './mode.ts';
import { useTestMediaStore } from './mediaStore.ts';

// Root hooks: a fresh database and Redis index per run (services mode) or a fresh PGlite in a temporary
// directory with the in-process adapters (embedded mode), migrated once; every server closed at the end.

let embedded: { postgres: EmbeddedPostgres; dir: string } | null = null;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    const mode = await detectTestMode();
    if (mode === 'embedded') {
      // Never the repository's ./.waveline: a temporary data directory of this run's own.
      const dir = mkdtempSync(join(tmpdir(), 'waveline-test-'));
      const postgres = await startEmbeddedPostgres(dir);
      embedded = { postgres, dir };
      process.env.WAVELINE_DATA_DIR = dir;
      process.env.DATABASE_URL = postgres.url;
      process.env.REDIS_URL = '';
      process.env.REDIS_CLUSTER_URLS = '';
      process.stderr.write(`test mode: embedded (PGlite in ${dir}/db over ${postgres.url}; Redis, queue and bus in-process)\n`);
    } else {
      process.stderr.write(
        `test mode: services (${process.env.DATABASE_URL}, ${process.env.REDIS_URL || `Redis Cluster ${process.env.REDIS_CLUSTER_URLS}`})\n`,
      );
    }
    await useTestMediaStore();
    const config = loadConfig();
    if (mode === 'services') await recreateDatabase(config.databaseUrl);
    await migrate(config);
    useRedisNames(config.redis);
    const redis = createRedis(config.redis);
    const cluster = clusterOf(redis);
    if (cluster) {
      await new Promise<void>((resolve, reject) =>
        cluster.status === 'ready' ? resolve() : cluster.once('ready', resolve).once('error', reject),
      );
      await Promise.all(cluster.nodes('master').map((node) => node.flushdb()));
    } else await redis.flushdb();
    redis.disconnect();
  },
  async afterAll() {
    await stopAllServers();
    await useTestMediaStore.close();
    if (embedded) {
      await embedded.postgres.close();
      rmSync(embedded.dir, { recursive: true, force: true });
      embedded = null;
    }
  },
};
