import { createServer, type Server } from 'node:http';
import type { Config } from '../config.ts';
import { initMetrics, startProcessMetrics } from '../lib/metrics.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { Shutdown } from '../lib/shutdown.ts';
import { createServices, type Services } from '../services.ts';
import { buildApp } from '../http/app.ts';
import { answerClientError } from '../http/envelope.ts';

/** Starts the Koa app on `port`; returns the server and a close function that drains in-flight requests. */
export async function startWeb(svc: Services, port: number, logger: Logger): Promise<{ server: Server; close(): Promise<void> }> {
  startProcessMetrics(svc.config.observability);
  const app = buildApp(svc);
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000; // longer than typical load-balancer idle timeouts
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  const address = server.address();
  logger.info({ port: typeof address === 'object' && address ? address.port : port }, 'web listening');
  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

export async function run(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config, 'web');
  initMetrics(config.observability);
  const shutdown = new Shutdown(logger);
  const svc = await createServices(config, logger);
  shutdown.add('services', () => svc.close());
  const web = await startWeb(svc, config.port, logger);
  shutdown.add('http', () => web.close());
  shutdown.listen();
}
