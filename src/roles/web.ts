import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.ts';
import { initMetrics, startProcessMetrics } from '../lib/metrics.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { Shutdown } from '../lib/shutdown.ts';
import { createWebServices, type WebServices } from '../services.ts';
import { allRoutes } from '../routes.ts';
import { buildApp } from '../http/app.ts';

/** Starts the Koa app on `port`; returns the server and a close function that drains in-flight requests. */
export async function startWeb(svc: WebServices, port: number, logger: Logger): Promise<{ server: Server; close(): Promise<void> }> {
  startProcessMetrics(svc.config.observability);
  const app = buildApp(svc, allRoutes);
  const server = createServer(app.handle);
  server.keepAliveTimeout = 65_000; // longer than typical load-balancer idle timeouts
  server.on('clientError', app.onClientError);
  // Connections by socket, so a stop can drop the ones with no request in flight (below).
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
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
        // A connection that sent no whole request yet (a slow or stalled client) is not "idle" to Node and
        // would hold the stop until the header timeout; one with a response in progress (its
        // `_httpMessage`) drains as it should.
        for (const socket of sockets) if (!(socket as Socket & { _httpMessage?: unknown })._httpMessage) socket.destroy();
      }),
  };
}

export async function run(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config, 'web');
  initMetrics(config.observability);
  const shutdown = new Shutdown(logger);
  const svc = await createWebServices(config, logger);
  shutdown.add('services', () => svc.close());
  const web = await startWeb(svc, config.port, logger);
  shutdown.add('http', () => web.close());
  shutdown.listen();
}
