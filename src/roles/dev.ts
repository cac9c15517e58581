import type { Config } from '../config.ts';
import { initMetrics } from '../lib/metrics.ts';
import { createLogger } from '../lib/logger.ts';
import { Shutdown } from '../lib/shutdown.ts';
import { createServices } from '../services.ts';
import { migrate } from './migrate.ts';
import { startWeb } from './web.ts';
import { startGateway } from '../gateway/server.ts';
import { startWorkers } from '../../workers/index.ts';
import { demoCredentialsBlock, loadDemoIfEmpty } from '../domains/admin/demo.ts';

/** All three roles in one process, on a migrated database: what `npm start` runs. */
export async function run(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config, 'dev');
  initMetrics(config.observability);
  const shutdown = new Shutdown(logger);
  const applied = await migrate(config);
  if (applied.length) logger.info({ applied }, 'migrations applied');
  const svc = await createServices(config, logger);
  shutdown.add('services', () => svc.close());
  const workers = await startWorkers(svc);
  shutdown.add('worker', () => workers.close());
  // Before web listens, so the first request already sees the demo; a failure never stops dev.
  const demo = config.demo ? await loadDemoIfEmpty(svc).catch((err: unknown) => void logger.error({ err }, 'could not load the demo bundle')) : null;
  const gateway = await startGateway(config, logger, config.gatewayPort);
  shutdown.add('gateway', () => gateway.close());
  const web = await startWeb(svc, config.port, logger);
  shutdown.add('web', () => web.close());
  shutdown.listen();
  const base = config.publicBaseUrl;
  logger.info({ web: base, realtime: config.realtimePublicUrl, apiReference: `${base}/docs`, widgetDemo: `${base}/demo` }, `waveline dev is up: API reference ${base}/docs · widget demo ${base}/demo`);
  if (demo) logger.info(demoCredentialsBlock(demo, config.publicBaseUrl));
}
