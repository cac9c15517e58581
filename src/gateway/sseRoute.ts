import type * as uWS from 'uWebSockets.js';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { requestIp, splitCursor, UNAVAILABLE, type Rejection } from './admission.ts';
import { errorFrame } from './frames.ts';
import { requestIdOf } from './requestId.ts';
import { newConnection, type Connection, type Sink } from './session.ts';
import { REFUSAL_STATUS, SSE_PING, SSE_PREAMBLE, SseStream } from './sse.ts';

// `GET /v1/realtime/sse`: the feed's Server-Sent Events transport. Admission, the start of a connection
// and the fan-out are the WebSocket's (admit.ts, session.ts, fanout.ts); this file only answers HTTP.

/** A refusal while the node drains: clients go to another node. */
const DRAINING: Rejection = { code: 'PROVIDER_UNAVAILABLE', message: 'This gateway node is restarting; reconnect.', closeCode: 1012 };

/** What the SSE route takes from the gateway. */
export interface SseDeps {
  config: Readonly<Config>;
  logger: Logger;
  draining(): boolean;
  admitNow(conn: Connection): Rejection | null | undefined;
  admitLater(conn: Connection): Promise<Rejection | null>;
  release(conn: Connection): void;
  start(conn: Connection, sink: Sink, cork: (run: () => void) => void, corked: boolean): void;
  /** Live events from now on (the fan-out's set of the connection's channels). */
  subscribe(conn: Connection, stream: SseStream): void;
  leave(conn: Connection, stream: SseStream): void;
  metrics: { connections: { inc(): void; dec(): void }; slow: { inc(): void }; sent(bytes: Buffer): void } | null;
  pingMs: number;
}

interface SseClient {
  conn: Connection;
  stream: SseStream;
  requestId: string;
}

/** The open SSE streams of a gateway, and the route that opens them. */
export class SseClients {
  private readonly clients = new Set<SseClient>();
  private readonly deps: SseDeps;
  private readonly pings: NodeJS.Timeout;

  constructor(app: uWS.TemplatedApp, deps: SseDeps) {
    this.deps = deps;
    app.get('/v1/realtime/sse', (res, req) => this.request(res, req));
    this.pings = setInterval(() => {
      for (const client of this.clients) client.stream.write(SSE_PING);
    }, deps.pingMs);
    this.pings.unref();
  }

  get size(): number {
    return this.clients.size;
  }

  /** Open streams of a station that may no longer be listened to: the error message, then the end. */
  refuse(stationId: string, rejection: Rejection): void {
    const message = Buffer.from(`data: ${errorFrame(rejection.code, rejection.message)}\n\n`);
    for (const client of [...this.clients])
      if (client.conn.stationIds.includes(stationId)) {
        client.stream.write(message);
        this.endStream(client);
      }
  }

  /** Ends a station's streams (a module switched on or off): browsers reconnect and resume. */
  end(stationId: string): void {
    for (const client of [...this.clients]) if (client.conn.stationIds.includes(stationId)) this.endStream(client);
  }

  /** Drain: every stream ends; browsers reconnect with Last-Event-ID, to another node, and resume. */
  close(): void {
    clearInterval(this.pings);
    for (const client of [...this.clients]) this.endStream(client);
  }

  private request(res: uWS.HttpResponse, req: uWS.HttpRequest): void {
    const { config, metrics } = this.deps;
    const requestId = requestIdOf(req);
    if (this.deps.draining()) return refuseRequest(res, requestId, DRAINING);
    const ip = requestIp(res, req, config.trustedProxyHops);
    const split = splitCursor(req.getQuery() ?? '');
    // The browser's Last-Event-ID header wins over `lastEventId` in the URL (its first connection's).
    const lastEventId = req.getHeader('last-event-id') || split.lastEventId;
    // SSE is new: every stream gets `reset` and `synced`.
    const conn = newConnection(ip, split.query, lastEventId, true);
    const stream = new SseStream(
      res,
      config.gateway.maxBackpressureBytes,
      () => metrics?.slow.inc(),
      (bytes) => metrics?.sent(bytes),
    );
    const client: SseClient = { conn, stream, requestId };
    res.onAborted(() => {
      stream.closed = true;
      conn.closed = true;
      this.drop(client);
    });
    const admitted = (rejection: Rejection | null, corked: boolean): void => {
      conn.query = '';
      if (conn.closed) return this.deps.release(conn);
      const answer = (): void => {
        if (rejection) return refuseRequest(res, requestId, rejection);
        this.clients.add(client);
        metrics?.connections.inc();
        this.open(client);
      };
      if (corked) answer();
      else res.cork(answer);
    };
    const now = this.deps.admitNow(conn);
    if (now !== undefined) return admitted(now, true);
    this.deps
      .admitLater(conn)
      .catch((err: unknown): Rejection => {
        this.deps.logger.warn({ err }, 'feed admission failed');
        return UNAVAILABLE;
      })
      .then((rejection) => admitted(rejection, false));
  }

  /** The stream's headers and `retry:`, then the state or replay, `synced` and live events. */
  private open(client: SseClient): void {
    const { res } = client.stream;
    res
      .writeStatus('200 OK')
      .writeHeader('X-Request-Id', client.requestId)
      .writeHeader('Content-Type', 'text/event-stream; charset=utf-8')
      .writeHeader('Cache-Control', 'no-store')
      .writeHeader('X-Accel-Buffering', 'no')
      .writeHeader('Access-Control-Allow-Origin', '*');
    client.stream.writeNow(SSE_PREAMBLE);
    const sink: Sink = {
      send: (frame, cursor) => client.stream.send(frame, cursor),
      subscribe: () => this.deps.subscribe(client.conn, client.stream),
    };
    this.deps.start(client.conn, sink, (run) => void res.cork(run), true); // `open` runs corked
  }

  /** Forgets a client whose connection is gone (once). */
  private drop(client: SseClient): void {
    if (!this.clients.delete(client)) return;
    client.conn.closed = true;
    this.deps.leave(client.conn, client.stream);
    this.deps.metrics?.connections.dec();
    this.deps.release(client.conn);
  }

  private endStream(client: SseClient): void {
    client.stream.end();
    this.drop(client);
  }
}

/** A refused SSE request: the error code's HTTP status and the error message as a JSON body, no stream. */
function refuseRequest(res: uWS.HttpResponse, requestId: string, rejection: Rejection): void {
  res
    .writeStatus(REFUSAL_STATUS[rejection.code])
    .writeHeader('X-Request-Id', requestId)
    .writeHeader('Content-Type', 'application/json')
    .writeHeader('Cache-Control', 'no-store')
    .writeHeader('Access-Control-Allow-Origin', '*');
  if (rejection.code === 'RATE_LIMITED' || rejection.code === 'PROVIDER_UNAVAILABLE') res.writeHeader('Retry-After', '3');
  res.end(errorFrame(rejection.code, rejection.message));
}
