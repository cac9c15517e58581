// First, every role's metrics in the order /metrics lists them (src/roles/metrics.ts: the files it lists
// import only lib/metrics.ts, so no station schema is built before the features register).
import './metrics.ts';
// Every feature's station setting is registered before anything builds the station schemas.
import '../features.ts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.ts';
import { initMetrics, startProcessMetrics } from '../lib/metrics.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { Shutdown } from '../lib/shutdown.ts';
import type { WebServices } from '../services.ts';
import { createWebServices } from './services.ts';
import { allRoutes } from '../routes.ts';
import { buildApp } from '../http/app.ts';

/**
 * How long a stop waits for requests that had started arriving (any byte received) to finish arriving:
 * a load balancer may still have sent a request the instant before it saw us leave, and a client on a slow
 * link sends its headers in pieces. Responses already under way get as long again; then the stop is
 * forced, inside the 25 s exit budget of `Shutdown`.
 */
export const DRAIN_GRACE_MS = 10_000;

/**
 * Starts the Koa app on `port`; returns the server and a close function that drains it:
 * - the listening socket closes at once (no new connections);
 * - connections with nothing in progress — idle keep-alive ones, and new ones that sent no byte yet —
 *   close at once (Node's `closeIdleConnections`: its parser marks a connection busy from the first byte
 *   of a request);
 * - every other connection finishes its request and gets a normal answer, with `Connection: close`; one
 *   whose request is still incomplete after `graceMs` is closed then, and any left after twice that
 *   (a response still streaming) too.
 */
export async function startWeb(
  svc: WebServices,
  port: number,
  logger: Logger,
): Promise<{ server: Server; close(graceMs?: number): Promise<void> }> {
  startProcessMetrics(svc.config.observability);
  const app = buildApp(svc, allRoutes);
  let draining = false;
  // The one 'request' listener (a second one would make every request's emit copy the listener list):
  // a request answered while draining ends its connection — checked before the app, since a read from
  // cached bytes answers synchronously.
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.shouldKeepAlive = false;
    app.handle(req, res);
  });
  server.keepAliveTimeout = 65_000; // longer than typical load-balancer idle timeouts
  server.on('clientError', app.onClientError);
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
  let closing: Promise<void> | null = null;
  return {
    server,
    close: (graceMs = DRAIN_GRACE_MS) =>
      (closing ??= new Promise<void>((resolve) => {
        draining = true;
        // A response under way when the drain starts ends its connection too.
        for (const socket of sockets) {
          const res = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
          if (res && !res.headersSent) res.shouldKeepAlive = false;
        }
        const timers: NodeJS.Timeout[] = [];
        server.close(() => {
          for (const timer of timers) clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
        if (sockets.size) logger.info({ connections: sockets.size, graceMs }, 'draining requests in progress');
        timers.push(
          setTimeout(() => {
            // Requests that never finished arriving: no response was started for them.
            for (const socket of sockets) if (!(socket as Socket & { _httpMessage?: unknown })._httpMessage) socket.destroy();
            server.closeIdleConnections();
          }, graceMs),
          setTimeout(() => server.closeAllConnections(), 2 * graceMs),
        );
        for (const timer of timers) timer.unref();
      })),
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
