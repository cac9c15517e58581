import * as uWS from 'uWebSockets.js';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { metricsAnswer } from '../lib/metrics.ts';
import { requestIdOf } from './requestId.ts';

// A gateway node's life: listening, its health and metrics endpoints, and the drain on shutdown (every
// connection told to reconnect elsewhere, then the bus, the gates and the pool closed).

/** Time given to clients to answer the close handshake before the remaining sockets are cut. */
const CLOSE_GRACE_MS = 300;
const STATUS_TEXT: Record<number, string> = { 200: 'OK', 401: 'Unauthorized', 404: 'Not Found' };

/** What the node drains and closes, in order. */
export interface LifecycleParts {
  config: Readonly<Config>;
  logger: Logger;
  /** Open connections of every transport (the health answer). */
  connections(): number;
  /** Tells every connection to reconnect elsewhere (1012, the end of SSE streams). */
  closeConnections(): void;
  /** What is closed after the grace period, in order (bus, gates, pool). */
  closeServices: Array<() => Promise<void>>;
}

export class Lifecycle {
  private readonly app: uWS.TemplatedApp;
  private readonly parts: LifecycleParts;
  private drainingNow = false;
  private listenSocket: uWS.us_listen_socket | null = null;
  private closing: Promise<void> | null = null;

  constructor(app: uWS.TemplatedApp, parts: LifecycleParts) {
    this.app = app;
    this.parts = parts;
  }

  /** Whether the node is shutting down: new connections are refused (503) and sent elsewhere. */
  get draining(): boolean {
    return this.drainingNow;
  }

  /** `/healthz`, `/metrics` and 404 for every other path: registered after the transports' routes. */
  routes(): void {
    const { app, parts } = this;
    app.get('/healthz', (res, req) => {
      res.writeStatus(this.drainingNow ? '503 Service Unavailable' : '200 OK');
      res.writeHeader('X-Request-Id', requestIdOf(req)).writeHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ ok: !this.drainingNow, connections: parts.connections() }));
    });
    app.get('/metrics', (res, req) => {
      const requestId = requestIdOf(req); // the request is only valid in this callback
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      void metricsAnswer(req.getHeader('authorization') || undefined, parts.config.observability).then((answer) => {
        if (aborted) return;
        res.cork(() => {
          res
            .writeStatus(`${answer.status} ${STATUS_TEXT[answer.status] ?? ''}`)
            .writeHeader('X-Request-Id', requestId)
            .writeHeader('Content-Type', answer.contentType)
            .writeHeader('Cache-Control', 'no-store');
          if (answer.wwwAuthenticate) res.writeHeader('WWW-Authenticate', answer.wwwAuthenticate);
          res.end(answer.body);
        });
      });
    });
    app.any('/*', (res, req) => {
      res.writeStatus('404 Not Found').writeHeader('X-Request-Id', requestIdOf(req)).end();
    });
  }

  /** Listens on `port` (0: any free one); returns the port bound. */
  async listen(port: number): Promise<number> {
    const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
      this.app.listen(port, (listening) =>
        listening ? resolve(listening) : reject(new Error(`gateway could not listen on port ${port}`)),
      );
    });
    this.listenSocket = socket;
    const bound = uWS.us_socket_local_port(socket);
    this.parts.logger.info({ port: bound }, 'gateway listening');
    return bound;
  }

  /** Drains the node once: no new connections, every open one told to reconnect elsewhere, then closes. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.drainingNow = true;
      if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
      this.parts.closeConnections();
      this.parts.logger.info('gateway closed its sockets with 1012');
      await new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS));
      this.app.close();
      for (const close of this.parts.closeServices) await close();
    })();
    return this.closing;
  }
}
