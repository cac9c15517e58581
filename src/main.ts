// The `waveline` CLI: `waveline <web|worker|gateway|migrate|dev>`. Each role is imported lazily, so the
// gateway process never loads Koa or knex and the web process never loads the job handlers.
import { ConfigError, loadConfig } from './config.ts';
import { checkServices, StartupError } from './lib/startup.ts';
import { keepTickShapes } from './lib/tickShapes.ts';

const USAGE = `usage: waveline <command>

  web       listener REST, GraphQL, media, push, ingest, admin API (PORT)
  worker    job processors (BullMQ)
  gateway   realtime WebSocket feed (PORT when run alone)
  migrate   apply database migrations, then exit
  dev       web + worker + gateway in one process (what \`npm start\` runs)
  admin     one admin API call from the command line: waveline admin [--key wvo_…] <METHOD> <PATH> [JSON|@file]
  keys      operator keys: waveline keys create|list|get|rotate|delete (root key)
  artwork   track art: waveline artwork pin|unpin|pins|block|unblock|blocks|recent <stationId> …
  media     media files: waveline media move --to s3|filesystem|postgres (copies every file, verified, resumable)
`;

const roles: Record<string, () => Promise<{ run(config: ReturnType<typeof loadConfig>): Promise<unknown> }>> = {
  web: () => import('./roles/web.ts'),
  worker: () => import('../workers/index.ts'),
  gateway: () => import('./roles/gateway.ts'),
  migrate: () => import('./roles/migrate.ts'),
  dev: () => import('./roles/dev.ts'),
  admin: () => import('./roles/admin.ts'),
  keys: () => import('./roles/keys.ts'),
  artwork: () => import('./roles/artwork.ts'),
  media: () => import('./roles/media.ts'),
};

async function main(): Promise<void> {
  // Before anything queues a tick: the tick objects' shapes then never change (lib/tickShapes.ts).
  keepTickShapes();
  const command = process.argv[2];
  if (!command || command === '--help' || command === '-h' || !(command in roles)) {
    process.stderr.write(USAGE);
    process.exit(command && !['--help', '-h'].includes(command) ? 64 : 0);
  }
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`waveline: configuration error: ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  // Separate processes share state only through Postgres and Redis: the embedded default is one process.
  if (SEPARATE.includes(command)) {
    const missing = config.redis.kind === 'memory' ? 'REDIS_URL' : !config.databaseUrl ? 'DATABASE_URL' : null;
    if (missing) {
      process.stderr.write(
        `waveline: ${missing} is not set: \`waveline ${command}\` runs as a separate process only with REDIS_URL (or REDIS_CLUSTER_URLS) and a Postgres DATABASE_URL (\`waveline dev\` / \`npm start\` runs embedded without them)\n`,
      );
      process.exit(78);
    }
  }
  await checkServices(config);
  const role = await roles[command]();
  await role.run(config);
}

const SEPARATE = ['web', 'worker', 'gateway'];

main().catch((err: unknown) => {
  if (err instanceof StartupError) {
    process.stderr.write(`waveline: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  process.stderr.write(`waveline: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
