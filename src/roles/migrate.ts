import type { Config } from '../config.ts';
import { createDb } from '../lib/db.ts';
import { createLogger } from '../lib/logger.ts';
import { ensureDatabase, migrateLatest } from '../lib/migrate.ts';
import { openEmbedded } from '../lib/embedded/index.ts';

export async function migrate(config: Readonly<Config>): Promise<string[]> {
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, { max: 1 });
  try {
    return await migrateLatest(db);
  } finally {
    await db.destroy();
  }
}

export async function run(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config, 'migrate');
  const embedded = await openEmbedded(config);
  const applied = await migrate(embedded.config).finally(() => embedded.close());
  logger.info({ applied }, applied.length ? 'migrations applied' : 'database is up to date');
}
