// First, every role's metrics in the order /metrics lists them (src/roles/metrics.ts: the files it lists
// import only lib/metrics.ts, so no station schema is built before the features register).
import './metrics.ts';
// Every feature's station setting is registered before anything builds the station schemas.
import '../features.ts';
import type { Config } from '../config.ts';
import { initMetrics } from '../lib/metrics.ts';
import { createLogger } from '../lib/logger.ts';
import { Shutdown } from '../lib/shutdown.ts';
import { createWebServices } from './services.ts';
import { migrate } from './migrate.ts';
import { startWeb } from './web.ts';
import { startGateway } from '../gateway/server.ts';
import { startWorkers } from '../../workers/index.ts';
import { demoCredentialsBlock, loadDemoIfEmpty } from '../domains/admin/demo.ts';
import { openEmbedded } from '../lib/embedded/index.ts';

/** All three roles in one process, on a migrated database: what `npm start` runs. */
export async function run(configured: Readonly<Config>): Promise<void> {
  const logger = createLogger(configured, 'dev');
  initMetrics(configured.observability);
  const shutdown = new Shutdown(logger);
  // First registered, so it closes last: PGlite stops after everything that used it.
  const embedded = await openEmbedded(configured);
  shutdown.add('embedded database', () => embedded.close());
  const config = embedded.config;
  const applied = await migrate(config);
  if (applied.length) logger.info({ applied }, 'migrations applied');
  const svc = await createWebServices(config, logger);
  shutdown.add('services', () => svc.close());
  const workers = await startWorkers(svc);
  shutdown.add('worker', () => workers.close());
  // Before web listens, so the first request already sees the demo; a failure never stops dev.
  const demo = config.demo
    ? await loadDemoIfEmpty(svc).catch((err: unknown) => void logger.error({ err }, 'could not load the demo bundle'))
    : null;
  const gateway = await startGateway(config, logger, config.gatewayPort);
  shutdown.add('gateway', () => gateway.close());
  const web = await startWeb(svc, config.port, logger);
  shutdown.add('web', () => web.close());
  shutdown.listen();
  const base = config.publicBaseUrl;
  const mode = {
    database: configured.databaseUrl ? 'postgres' : `embedded (${configured.dataDir}/db)`,
    redis: { memory: 'in-process', single: 'redis', cluster: 'redis cluster' }[configured.redis.kind],
  };
  logger.info(
    { web: base, realtime: config.realtimePublicUrl, apiReference: `${base}/docs`, widgetDemo: `${base}/demo`, ...mode },
    `waveline dev is up: API reference ${base}/docs · widget demo ${base}/demo`,
  );
  if (demo) logger.info(demoCredentialsBlock(demo, config.publicBaseUrl));
}
