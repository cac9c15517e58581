// Every role's metrics, in the order /metrics lists them (src/roles/metrics.ts).
import './metrics.ts';
import type { Config } from '../config.ts';
import { initMetrics } from '../lib/metrics.ts';
import { createLogger } from '../lib/logger.ts';
import { Shutdown } from '../lib/shutdown.ts';
import { startGateway } from '../gateway/server.ts';

export async function run(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config, 'gateway');
  initMetrics(config.observability);
  const shutdown = new Shutdown(logger);
  const gateway = await startGateway(config, logger, config.port);
  shutdown.add('gateway', () => gateway.close());
  shutdown.listen();
}
