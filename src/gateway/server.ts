import * as uWS from 'uWebSockets.js';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { Admission, requestIp, splitCursor, UNAVAILABLE, type Rejection } from './admission.ts';
import { FeedBridge } from './bridge.ts';
import { Fanout } from './fanout.ts';
import { errorFrame } from './frames.ts';
import { begin, newConnection, prepare, ready, type Connection, type Sink } from './session.ts';
import { SSE_PING_MS } from './sse.ts';
import { SseClients } from './sseRoute.ts';
import { requestIdOf } from './requestId.ts';
import type { FeedChannel } from './session.ts';
import { FeedStore } from './store.ts';
import { gatewayResyncs, gatewayTallies, metricsAnswer, metricsEnabled, startProcessMetrics } from '../lib/metrics.ts';

// The realtime gateway (decisions.md, "Realtime feed"). It never imports Koa or knex: Postgres through a
// small `pg` pool (station gate, current rows, catch-up), Redis for the feed bus and invalidations.

export interface Gateway {
  port: number;
  /** CLIENT SETNAME of the gateway's Redis subscriber connection. */
  redisClientName: string;
  /** Postgres queries this gateway has sent (reconnecting clients must not cost one each). */
  queries(): number;
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** Fixed delay between Redis reconnection attempts of the subscriber. */
  redisReconnectDelayMs?: number;
  /** Period of the SSE heartbeat comment (tests shorten it). */
  ssePingMs?: number;
}

type Transport = 'websocket' | 'sse';

/**
 * What a socket carries from its upgrade: one property. uWS copies every property of the upgrade's user
 * data onto the socket through V8's C++ API when it opens (about 0.5 µs each, measured): the connection's
 * fields live in their own object.
 */
interface SocketData {
  conn: Connection;
}
type Socket = uWS.WebSocket<SocketData>;

/** Close code telling clients this node is going away and they should reconnect elsewhere. */
const CLOSE_RESTARTING = 1012;
/** Time given to clients to answer the close handshake before the remaining sockets are cut. */
const CLOSE_GRACE_MS = 300;
const STATUS_TEXT: Record<number, string> = { 200: 'OK', 401: 'Unauthorized', 404: 'Not Found' };
const isRejection = (value: unknown): value is Rejection => typeof value === 'object' && value !== null && 'code' in value;

export async function startGateway(config: Readonly<Config>, logger: Logger, port: number, options: GatewayOptions = {}): Promise<Gateway> {
  const app = uWS.App();
  const store = new FeedStore(config.databaseUrl, logger);
  const admission = new Admission(config, store, logger);
  const metrics = metricsEnabled() && config.observability.metrics;
  startProcessMetrics(config.observability);
  /** The per-transport series, looked up once and counted in plain numbers (metrics.ts, `Tally`). */
  const counted = { websocket: gatewayTallies('websocket'), sse: gatewayTallies('sse') };
  if (metrics) for (const transport of Object.values(counted)) for (const metric of Object.values(transport)) metric.show();
  /** Counts frames as sent to `receivers` clients (waveline_gateway_frames_sent_total, bytes). */
  const sent = (frame: Buffer | string, receivers = 1, transport: Transport = 'websocket'): void => {
    if (!metrics || receivers === 0) return;
    counted[transport].frames.inc(receivers);
    counted[transport].bytes.inc(receivers * (typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length));
  };
  const fanout = new Fanout(
    (stationId, latencyMs) => (latencyMs > 0 ? bridge.view(stationId, latencyMs) : bridge.feed(stationId)),
    (topic, frame) => {
      app.publish(topic, frame, false, false);
      if (metrics) sent(frame, app.numSubscribers(topic));
    },
    (frames, bytes) => {
      if (!metrics) return;
      counted.sse.frames.inc(frames);
      counted.sse.bytes.inc(bytes);
    },
  );
  const bridge = new FeedBridge(config.redisUrl, store, (stationId, change) => fanout.change(stationId, change), logger, {
    reconnectDelayMs: options.redisReconnectDelayMs,
  });
  bridge.onDelayedChange = (stationId, latencyMs, change) => fanout.delayedChange(stationId, latencyMs, change);
  const sockets = new Set<Socket>();
  let draining = false;

  function refuse(ws: Socket, rejection: Rejection): void {
    const frame = errorFrame(rejection.code, rejection.message);
    ws.cork(() => ws.send(frame));
    sent(frame);
    // Outside the cork: a socket ended inside `cork` from a later turn (an awaited admission, an admin
    // change) gets its TCP connection closed only by uWS's timeout sweep, 13-16 s later, and clients that
    // report the close once the server ends TCP (Node's WebSocket, browsers) saw the 1008 that late.
    ws.end(rejection.closeCode, rejection.code);
  }

  /** Stations with connections still being decided (their sockets already list the station). */
  const deciding = new Map<string, number>();

  /** After an admin change: sockets of a station that may no longer be listened to are refused. */
  async function recheck(stationId: string): Promise<void> {
    const rejection = await admission.gate(stationId).catch(() => null);
    if (rejection) {
      for (const ws of sockets) if (ws.getUserData().conn.stationIds.includes(stationId)) refuse(ws, rejection);
      sse.refuse(stationId, rejection);
      return;
    }
    // A module switched on or off changes which kinds of rows the station's feed sends: its listeners
    // reconnect (1012) and start again from a snapshot of what is delivered now.
    const changed = await bridge
      .feed(stationId)
      ?.refreshHiddenKinds()
      .catch(() => false);
    if (!changed) return;
    if (metrics) gatewayResyncs.labels('settings_changed').inc();
    for (const ws of sockets)
      if (ws.getUserData().conn.stationIds.includes(stationId)) ws.end(CLOSE_RESTARTING, 'station settings changed');
    sse.end(stationId);
  }
  bridge.onStationChanged = (stationId) => {
    admission.forget(stationId);
    if (bridge.feed(stationId) || deciding.has(stationId)) void recheck(stationId);
  };
  bridge.onResubscribed = () => {
    admission.forgetAll();
    for (const stationId of bridge.stations()) void recheck(stationId);
  };
  await bridge.start();

  /** Counts the connection and its stations; the caller has checked every gate. */
  function reserve(conn: Connection, stationIds: readonly string[], latencies: readonly number[] | null): Rejection | null {
    const ip = admission.reserveConnection(conn.ip);
    if (typeof ip !== 'string') return ip;
    conn.ip = ip;
    conn.stationIds = stationIds;
    conn.latencies = latencies;
    conn.admitted = true;
    conn.set = fanout.join(stationIds, latencies);
    return null;
  }

  /** The stations a connection hears delayed (`stream=` with a latency there), and at what latency. */
  const delayedOf = (stationIds: readonly string[], latencies: readonly number[] | null): Array<[string, number]> =>
    latencies ? stationIds.flatMap((stationId, i): Array<[string, number]> => (latencies[i] > 0 ? [[stationId, latencies[i]]] : [])) : [];

  /**
   * The common case decided without waiting: no attempt counting, station gates cached and feeds warm.
   * Returns undefined when something has to be read first.
   */
  function admitNow(conn: Connection): Rejection | null | undefined {
    if (admission.limitsAttempts) return undefined;
    const stationIds = admission.channels(conn.query);
    if (isRejection(stationIds)) return stationIds;
    const stream = admission.stream(conn.query);
    if (isRejection(stream)) return stream;
    for (const stationId of stationIds) {
      const known = admission.gateNow(stationId);
      if (!known) return undefined;
      if (known.rejection) return known.rejection;
    }
    const latencies = admission.latencies(stationIds, stream);
    if (isRejection(latencies)) return latencies;
    if (!stationIds.every((stationId) => bridge.isWarm(stationId))) return undefined;
    const delayed = delayedOf(stationIds, latencies);
    if (!delayed.every(([stationId]) => bridge.viewsReady(stationId))) return undefined;
    const refused = reserve(conn, stationIds, latencies);
    if (refused) return refused;
    for (const stationId of stationIds) bridge.acquireNow(stationId);
    for (const [stationId, latency] of delayed) bridge.acquireViewNow(stationId, latency);
    return null;
  }

  async function admitLater(conn: Connection): Promise<Rejection | null> {
    const limited = await admission.takeAttempt(conn.ip);
    if (limited) return limited;
    const stationIds = admission.channels(conn.query);
    if (isRejection(stationIds)) return stationIds;
    const stream = admission.stream(conn.query);
    if (isRejection(stream)) return stream;
    // Listed at once, so an admin change arriving while this connection waits refuses it too.
    conn.stationIds = stationIds;
    for (const stationId of stationIds) deciding.set(stationId, (deciding.get(stationId) ?? 0) + 1);
    try {
      return await decide(conn, stationIds, stream);
    } finally {
      for (const stationId of stationIds) {
        const count = (deciding.get(stationId) ?? 1) - 1;
        if (count > 0) deciding.set(stationId, count);
        else deciding.delete(stationId);
      }
    }
  }

  async function decide(conn: Connection, stationIds: readonly string[], stream: string | null): Promise<Rejection | null> {
    for (const stationId of stationIds) {
      const rejection = await admission.gate(stationId);
      if (rejection) return rejection;
    }
    const latencies = admission.latencies(stationIds, stream);
    if (isRejection(latencies)) return latencies;
    const delayed = delayedOf(stationIds, latencies);
    const acquired: string[] = [];
    const views: Array<[string, number]> = [];
    const releaseAll = (): void => {
      for (const [stationId, latency] of views) bridge.releaseView(stationId, latency);
      for (const stationId of acquired) bridge.release(stationId);
    };
    try {
      for (const stationId of stationIds) {
        await bridge.acquire(stationId);
        acquired.push(stationId);
      }
      for (const [stationId, latency] of delayed) {
        await bridge.acquireView(stationId, latency);
        views.push([stationId, latency]);
      }
    } catch (err) {
      logger.warn({ err }, 'could not load feed state for a connection');
      releaseAll();
      return UNAVAILABLE;
    }
    const refused = conn.closed ? null : reserve(conn, stationIds, latencies);
    if (refused || conn.closed) releaseAll();
    return refused;
  }

  function release(conn: Connection): void {
    if (!conn.admitted) return;
    conn.admitted = false;
    if (conn.set) fanout.leave(conn.set);
    conn.set = null;
    for (const [stationId, latency] of delayedOf(conn.stationIds, conn.latencies)) bridge.releaseView(stationId, latency);
    for (const stationId of conn.stationIds) bridge.release(stationId);
    admission.releaseConnection(conn.ip);
  }

  /**
   * Each channel's state or replay, `synced` (when the client asked for resume), then live events
   * (session.ts): in one turn, so no change falls in between. `corked`: called inside a uWS callback,
   * whose writes uWS corks already (the 101 and every message then leave in one write); otherwise, and
   * for a resume that needs a shared read first (a catch-up, older content bodies) and is answered once
   * it is in, `cork` runs it corked.
   */
  function start(conn: Connection, sink: Sink, cork: (run: () => void) => void, corked: boolean): void {
    const latencies = conn.latencies;
    const feeds = conn.stationIds
      .map((stationId, i) => (latencies && latencies[i] > 0 ? bridge.view(stationId, latencies[i]) : bridge.feed(stationId)))
      .filter((feed): feed is NonNullable<typeof feed> => !!feed) as FeedChannel[];
    const run = (): void => {
      if (conn.closed) return;
      const lastEventId = conn.lastEventId;
      conn.lastEventId = null;
      begin(sink, feeds, lastEventId, conn.resume);
    };
    if (ready(feeds, conn.lastEventId, conn.resume)) return corked ? run() : cork(run);
    prepare(feeds, conn.lastEventId)
      .catch((err: unknown) => logger.warn({ err }, 'resume read failed; the channels are reset'))
      .then(() => (conn.closed ? undefined : cork(run)));
  }

  function wsSink(ws: Socket, conn: Connection): Sink {
    return {
      send(frame) {
        if (conn.closed || ws.send(frame, false, false) === 2 || conn.closed) return false; // closed for backpressure
        sent(frame);
        return true;
      },
      subscribe() {
        if (conn.set) ws.subscribe(conn.set.topic);
      },
    };
  }

  app.ws<SocketData>('/v1/realtime', {
    compression: 0, // uWS.DISABLED: permessage-deflate would cost a compressor per socket
    maxPayloadLength: config.gateway.maxMessageBytes,
    maxBackpressure: config.gateway.maxBackpressureBytes,
    closeOnBackpressureLimit: true,
    idleTimeout: config.gateway.idleTimeoutSeconds,
    sendPingsAutomatically: true,
    maxLifetime: 0,
    // The upgrade always completes at once and the connection is decided in `open` (on the spot in the
    // common case). Upgrading later, after an await, needs `res.cork(() => res.upgrade())`, which in this
    // uWS build can close the fresh socket at random (uWebSockets.js#1108), and it kept ~640 bytes of
    // native memory per connection.
    upgrade(res, req, context) {
      if (draining) {
        res.writeStatus('503 Service Unavailable').writeHeader('X-Request-Id', requestIdOf(req)).end();
        return;
      }
      const ip = requestIp(res, req, config.trustedProxyHops);
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
    },
    open(ws) {
      const { conn } = ws.getUserData();
      sockets.add(ws);
      if (metrics) counted.websocket.connections.inc();
      if (draining) return ws.end(CLOSE_RESTARTING, 'restarting');
      const now = admitNow(conn);
      const cork = (run: () => void): void => void ws.cork(run);
      if (now !== undefined) {
        conn.query = '';
        // `open` runs corked: uWS writes the 101 and these messages in one write.
        return now ? refuse(ws, now) : start(conn, wsSink(ws, conn), cork, true);
      }
      admitLater(conn)
        .catch((err: unknown): Rejection => {
          logger.warn({ err }, 'feed admission failed');
          return UNAVAILABLE;
        })
        .then((rejection) => {
          conn.query = '';
          if (conn.closed) return;
          if (rejection) refuse(ws, rejection);
          else start(conn, wsSink(ws, conn), cork, false);
        });
    },
    message() {
      // Clients have nothing to say on this feed; their frames are ignored.
    },
    dropped(ws) {
      // A frame did not fit under GATEWAY_MAX_BACKPRESSURE_BYTES: uWS closes the socket (closeOnBackpressureLimit).
      const { conn } = ws.getUserData();
      if (conn.slow) return;
      conn.slow = true;
      if (metrics) counted.websocket.slow.inc();
    },
    close(ws) {
      const { conn } = ws.getUserData();
      conn.closed = true;
      sockets.delete(ws);
      if (metrics) counted.websocket.connections.dec();
      release(conn);
    },
  });

  const sse = new SseClients(app, {
    config,
    logger,
    draining: () => draining,
    admitNow,
    admitLater,
    release,
    start,
    subscribe: (conn, stream) => {
      if (conn.set) fanout.subscribeStream(conn.set, stream);
    },
    leave: (conn, stream) => conn.set?.streams.delete(stream),
    metrics: metrics ? { connections: counted.sse.connections, slow: counted.sse.slow, sent: (bytes) => sent(bytes, 1, 'sse') } : null,
    pingMs: options.ssePingMs ?? SSE_PING_MS,
  });
  app.get('/v1/realtime', (res, req) => {
    res.writeStatus('426 Upgrade Required').writeHeader('X-Request-Id', requestIdOf(req)).writeHeader('Content-Type', 'application/json');
    res.end(errorFrame('VALIDATION_ERROR', 'This is a WebSocket endpoint.'));
  });
  app.get('/healthz', (res, req) => {
    res.writeStatus(draining ? '503 Service Unavailable' : '200 OK');
    res.writeHeader('X-Request-Id', requestIdOf(req)).writeHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ ok: !draining, connections: sockets.size + sse.size }));
  });
  app.get('/metrics', (res, req) => {
    const requestId = requestIdOf(req); // the request is only valid in this callback
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    void metricsAnswer(req.getHeader('authorization') || undefined, config.observability).then((answer) => {
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

  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen(port, (socket) => (socket ? resolve(socket) : reject(new Error(`gateway could not listen on port ${port}`))));
  });
  const boundPort = uWS.us_socket_local_port(listenSocket);
  logger.info({ port: boundPort }, 'gateway listening');

  let closing: Promise<void> | null = null;
  return {
    port: boundPort,
    redisClientName: bridge.clientName,
    queries: () => store.queries,
    close() {
      closing ??= (async () => {
        draining = true;
        uWS.us_listen_socket_close(listenSocket);
        for (const ws of [...sockets]) ws.cork(() => ws.end(CLOSE_RESTARTING, 'restarting'));
        sse.close(); // browsers reconnect with Last-Event-ID, to another node, and resume
        logger.info('gateway closed its sockets with 1012');
        await new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS));
        app.close();
        await bridge.close();
        await admission.close();
        await store.close();
      })();
      return closing;
    },
  };
}
