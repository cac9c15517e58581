import * as uWS from 'uWebSockets.js';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { Admission, CLOSE_INTERNAL, clientIp, parseChannels, type Rejection } from './admission.ts';
import { FeedBridge } from './bridge.ts';
import { errorFrame } from './frames.ts';
import { FeedStore } from './store.ts';

// The realtime gateway (decisions.md, "Realtime feed"). It never imports Koa or knex: Postgres through a
// small `pg` pool (station gate, current rows, catch-up), Redis for the feed bus and invalidations.

export interface Gateway {
  port: number;
  /** CLIENT SETNAME of the gateway's Redis subscriber connection. */
  redisClientName: string;
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** Fixed delay between Redis reconnection attempts of the subscriber. */
  redisReconnectDelayMs?: number;
}

/** Per-socket state, kept small: a gateway holds tens of thousands of these. */
interface Connection {
  ip: string;
  stationIds: string[];
  rejection: Rejection | null;
}

/** Close code telling clients this node is going away and they should reconnect elsewhere. */
const CLOSE_RESTARTING = 1012;
/** Time given to clients to answer the close handshake before the remaining sockets are cut. */
const CLOSE_GRACE_MS = 300;

export async function startGateway(config: Readonly<Config>, logger: Logger, port: number, options: GatewayOptions = {}): Promise<Gateway> {
  const app = uWS.App();
  const store = new FeedStore(config.databaseUrl, logger);
  const admission = new Admission(config, store, logger);
  const bridge = new FeedBridge(config.redisUrl, store, (topic, frame) => app.publish(topic, frame, false, false), logger, {
    reconnectDelayMs: options.redisReconnectDelayMs,
  });
  const sockets = new Set<uWS.WebSocket<Connection>>();
  let draining = false;

  function refuse(ws: uWS.WebSocket<Connection>, rejection: Rejection): void {
    ws.cork(() => {
      ws.send(errorFrame(rejection.code, rejection.message));
      ws.end(rejection.closeCode, rejection.code);
    });
  }

  /** After an admin change: sockets of a station that may no longer be listened to are refused. */
  async function recheck(stationId: string): Promise<void> {
    const rejection = await admission.gate(stationId).catch(() => null);
    if (!rejection) return;
    for (const ws of sockets) if (ws.getUserData().stationIds.includes(stationId)) refuse(ws, rejection);
  }
  bridge.onStationChanged = (stationId) => {
    admission.forget(stationId);
    if (bridge.feed(stationId)) void recheck(stationId);
  };
  bridge.onResubscribed = () => {
    admission.forgetAll();
    for (const stationId of bridge.stations()) void recheck(stationId);
  };
  await bridge.start();

  /** Decides on a connection; on success its stations are warm and counted until the socket closes. */
  async function admit(ip: string, query: string): Promise<Connection> {
    const refused = (rejection: Rejection): Connection => ({ ip, stationIds: [], rejection });
    const limited = await admission.takeAttempt(ip);
    if (limited) return refused(limited);
    const parsed = parseChannels(query);
    if ('code' in parsed) return refused(parsed);
    // Let invalidation messages already received in this loop turn run before the gate is read.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const stationId of parsed.stationIds) {
      const rejection = await admission.gate(stationId);
      if (rejection) return refused(rejection);
    }
    const tooMany = admission.reserveConnection(ip);
    if (tooMany) return refused(tooMany);
    const acquired: string[] = [];
    try {
      for (const stationId of parsed.stationIds) {
        await bridge.acquire(stationId);
        acquired.push(stationId);
      }
    } catch (err) {
      logger.warn({ err }, 'could not load feed state for a connection');
      for (const stationId of acquired) bridge.release(stationId);
      admission.releaseConnection(ip);
      return refused({ code: 'PROVIDER_UNAVAILABLE', message: 'The feed is temporarily unavailable; reconnect later.', closeCode: CLOSE_INTERNAL });
    }
    return { ip, stationIds: parsed.stationIds, rejection: null };
  }

  function forgetConnection(conn: Connection): void {
    if (conn.rejection) return;
    for (const stationId of conn.stationIds) bridge.release(stationId);
    admission.releaseConnection(conn.ip);
  }

  app.ws<Connection>('/v1/realtime', {
    compression: 0, // uWS.DISABLED: permessage-deflate would cost a compressor per socket
    maxPayloadLength: config.gateway.maxMessageBytes,
    maxBackpressure: config.gateway.maxBackpressureBytes,
    closeOnBackpressureLimit: true,
    idleTimeout: config.gateway.idleTimeoutSeconds,
    sendPingsAutomatically: true,
    maxLifetime: 0,
    upgrade(res, req, context) {
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const query = req.getQuery() ?? '';
      const ip = clientIp(Buffer.from(res.getRemoteAddressAsText()).toString(), req.getHeader('x-forwarded-for'), config.gateway.trustedProxyHops);
      if (draining) {
        res.writeStatus('503 Service Unavailable').end();
        return;
      }
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      admit(ip, query)
        .catch((err: unknown): Connection => {
          logger.warn({ err }, 'feed admission failed');
          return { ip, stationIds: [], rejection: { code: 'PROVIDER_UNAVAILABLE', message: 'The feed is temporarily unavailable; reconnect later.', closeCode: CLOSE_INTERNAL } };
        })
        .then((conn) => {
          if (aborted) return forgetConnection(conn);
          res.cork(() => res.upgrade(conn, key, protocol, extensions, context));
        });
    },
    open(ws) {
      const conn = ws.getUserData();
      if (conn.rejection) return refuse(ws, conn.rejection);
      sockets.add(ws);
      if (draining) return ws.end(CLOSE_RESTARTING, 'restarting');
      // The current state, then live events: both happen in this one turn, so nothing falls in between.
      for (const stationId of conn.stationIds) {
        const feed = bridge.feed(stationId);
        if (!feed) continue;
        for (const frame of feed.snapshot()) {
          if (ws.send(frame, false, false) === 2 || !sockets.has(ws)) return; // closed for backpressure
        }
        ws.subscribe(feed.topic);
      }
    },
    message() {
      // Clients have nothing to say on this feed; their frames are ignored.
    },
    close(ws) {
      const conn = ws.getUserData();
      if (!conn.rejection) sockets.delete(ws);
      forgetConnection(conn);
    },
  });
  app.get('/v1/realtime', (res) => {
    res.writeStatus('426 Upgrade Required').writeHeader('Content-Type', 'application/json');
    res.end(errorFrame('VALIDATION_ERROR', 'This is a WebSocket endpoint.'));
  });
  app.get('/healthz', (res) => {
    res.writeStatus(draining ? '503 Service Unavailable' : '200 OK');
    res.writeHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ ok: !draining, connections: sockets.size }));
  });
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').end();
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
    close() {
      closing ??= (async () => {
        draining = true;
        uWS.us_listen_socket_close(listenSocket);
        for (const ws of [...sockets]) ws.cork(() => ws.end(CLOSE_RESTARTING, 'restarting'));
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
