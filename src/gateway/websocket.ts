import type * as uWS from 'uWebSockets.js';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { requestIp, splitCursor, UNAVAILABLE, type Rejection } from './admission.ts';
import type { Admitter, StationConnections } from './admit.ts';
import { errorFrame } from './frames.ts';
import { requestIdOf } from './requestId.ts';
import { newConnection, type Connection, type Sink } from './session.ts';
import type { SentTallies } from './tallies.ts';

// `/v1/realtime`: the feed's WebSocket transport. Admission and the start of a connection are shared
// with SSE (admit.ts, session.ts); live events reach the sockets through uWS topics (fanout.ts).

/** Close code telling clients this node is going away and they should reconnect elsewhere. */
export const CLOSE_RESTARTING = 1012;

/**
 * What a socket carries from its upgrade: one property. uWS copies every property of the upgrade's user
 * data onto the socket through V8's C++ API when it opens (about 0.5 µs each, measured): the connection's
 * fields live in their own object.
 */
interface SocketData {
  conn: Connection;
}
type Socket = uWS.WebSocket<SocketData>;

/** What the WebSocket route takes from the gateway. */
export interface WebSocketDeps {
  config: Readonly<Config>;
  logger: Logger;
  admitter: Admitter;
  tallies: SentTallies;
  draining(): boolean;
}

/** The open WebSockets of a gateway, and the route that opens them. */
export class WebSocketClients implements StationConnections {
  private readonly sockets = new Set<Socket>();
  private readonly deps: WebSocketDeps;

  constructor(app: uWS.TemplatedApp, deps: WebSocketDeps) {
    this.deps = deps;
    const { config } = deps;
    app.ws<SocketData>('/v1/realtime', {
      compression: 0, // uWS.DISABLED: permessage-deflate would cost a compressor per socket
      maxPayloadLength: config.gateway.maxMessageBytes,
      maxBackpressure: config.gateway.maxBackpressureBytes,
      closeOnBackpressureLimit: true,
      idleTimeout: config.gateway.idleTimeoutSeconds,
      sendPingsAutomatically: true,
      maxLifetime: 0,
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => this.open(ws),
      message() {
        // Clients have nothing to say on this feed; their frames are ignored.
      },
      dropped: (ws) => {
        // A frame did not fit under GATEWAY_MAX_BACKPRESSURE_BYTES: uWS closes the socket (closeOnBackpressureLimit).
        const { conn } = ws.getUserData();
        if (conn.slow) return;
        conn.slow = true;
        if (deps.tallies.on) deps.tallies.websocket.slow.inc();
      },
      close: (ws) => {
        const { conn } = ws.getUserData();
        conn.closed = true;
        this.sockets.delete(ws);
        if (deps.tallies.on) deps.tallies.websocket.connections.dec();
        deps.admitter.release(conn);
      },
    });
    app.get('/v1/realtime', (res, req) => {
      res.writeStatus('426 Upgrade Required').writeHeader('X-Request-Id', requestIdOf(req)).writeHeader('Content-Type', 'application/json');
      res.end(errorFrame('VALIDATION_ERROR', 'This is a WebSocket endpoint.'));
    });
  }

  get size(): number {
    return this.sockets.size;
  }

  refuse(stationId: string, rejection: Rejection): void {
    for (const ws of this.sockets) if (ws.getUserData().conn.stationIds.includes(stationId)) this.refuseSocket(ws, rejection);
  }

  end(stationId: string): void {
    for (const ws of this.sockets)
      if (ws.getUserData().conn.stationIds.includes(stationId)) ws.end(CLOSE_RESTARTING, 'station settings changed');
  }

  /** Drain: every socket is closed with 1012; clients reconnect to another node and resume. */
  close(): void {
    for (const ws of [...this.sockets]) ws.cork(() => ws.end(CLOSE_RESTARTING, 'restarting'));
  }

  // The upgrade always completes at once and the connection is decided in `open` (on the spot in the
  // common case). Upgrading later, after an await, needs `res.cork(() => res.upgrade())`, which in this
  // uWS build can close the fresh socket at random (uWebSockets.js#1108), and it kept ~640 bytes of
  // native memory per connection.
  private upgrade(res: uWS.HttpResponse, req: uWS.HttpRequest, context: uWS.us_socket_context_t): void {
    if (this.deps.draining()) {
      res.writeStatus('503 Service Unavailable').writeHeader('X-Request-Id', requestIdOf(req)).end();
      return;
    }
    const ip = requestIp(res, req, this.deps.config.trustedProxyHops);
    const { query, lastEventId } = splitCursor(req.getQuery() ?? '');
    // Only a client that passed `lastEventId` (even empty) asked for resume and meets `reset` and `synced`.
    const conn = newConnection(ip, query, lastEventId, lastEventId !== null);
    res.upgrade<SocketData>(
      { conn },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  }

  private open(ws: Socket): void {
    const { admitter, tallies, logger } = this.deps;
    const { conn } = ws.getUserData();
    this.sockets.add(ws);
    if (tallies.on) tallies.websocket.connections.inc();
    if (this.deps.draining()) return ws.end(CLOSE_RESTARTING, 'restarting');
    const now = admitter.admitNow(conn);
    const cork = (run: () => void): void => void ws.cork(run);
    if (now !== undefined) {
      conn.query = '';
      // `open` runs corked: uWS writes the 101 and these messages in one write.
      return now ? this.refuseSocket(ws, now) : admitter.start(conn, this.sink(ws, conn), cork, true);
    }
    admitter
      .admitLater(conn)
      .catch((err: unknown): Rejection => {
        logger.warn({ err }, 'feed admission failed');
        return UNAVAILABLE;
      })
      .then((rejection) => {
        conn.query = '';
        if (conn.closed) return;
        if (rejection) this.refuseSocket(ws, rejection);
        else admitter.start(conn, this.sink(ws, conn), cork, false);
      });
  }

  private sink(ws: Socket, conn: Connection): Sink {
    const { tallies } = this.deps;
    return {
      send(frame) {
        if (conn.closed || ws.send(frame, false, false) === 2 || conn.closed) return false; // closed for backpressure
        tallies.sent(frame);
        return true;
      },
      subscribe() {
        if (conn.set) ws.subscribe(conn.set.topic);
      },
    };
  }

  private refuseSocket(ws: Socket, rejection: Rejection): void {
    const frame = errorFrame(rejection.code, rejection.message);
    ws.cork(() => ws.send(frame));
    this.deps.tallies.sent(frame);
    // Outside the cork: a socket ended inside `cork` from a later turn (an awaited admission, an admin
    // change) gets its TCP connection closed only by uWS's timeout sweep, 13-16 s later, and clients that
    // report the close once the server ends TCP (Node's WebSocket, browsers) saw the 1008 that late.
    ws.end(rejection.closeCode, rejection.code);
  }
}
