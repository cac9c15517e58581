import * as uWS from 'uWebSockets.js';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { metricsEnabled, startProcessMetrics } from '../lib/metrics.ts';
import { Admission } from './admission.ts';
import { Admitter } from './admit.ts';
import { FeedBridge } from './bridge.ts';
import { Fanout } from './fanout.ts';
import { Lifecycle } from './lifecycle.ts';
import { SSE_PING_MS } from './sse.ts';
import { SseClients } from './sseRoute.ts';
import { FeedStore } from './store.ts';
import { SentTallies } from './tallies.ts';
import { WebSocketClients } from './websocket.ts';

// The realtime gateway (docs/realtime.md#how-the-gateway-works). It never imports Koa or knex: Postgres through a
// small `pg` pool (station gate, current rows, catch-up), Redis for the feed bus and invalidations.
// This file only wires the parts: admission (admit.ts), the two transports (websocket.ts, sseRoute.ts)
// and the node's lifecycle (lifecycle.ts).

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

export async function startGateway(config: Readonly<Config>, logger: Logger, port: number, options: GatewayOptions = {}): Promise<Gateway> {
  const app = uWS.App();
  const store = new FeedStore(config.databaseUrl, logger, undefined, {
    urls: config.databaseReplicaUrls,
    maxLagSeconds: config.databaseReplicaMaxLagSeconds,
  });
  const admission = new Admission(config, store, logger);
  const metrics = metricsEnabled() && config.observability.metrics;
  startProcessMetrics(config.observability);
  const tallies = new SentTallies(metrics);
  const fanout = new Fanout(
    (stationId, latencyMs) => (latencyMs > 0 ? bridge.view(stationId, latencyMs) : bridge.feed(stationId)),
    (topic, frame) => {
      app.publish(topic, frame, false, false);
      if (metrics) tallies.sent(frame, app.numSubscribers(topic));
    },
    (frames, bytes) => tallies.sseWritten(frames, bytes),
  );
  const bridge = new FeedBridge(
    config.redisUrl,
    store,
    {
      change: (stationId, change) => fanout.change(stationId, change),
      delayedChange: (stationId, latencyMs, change) => fanout.delayedChange(stationId, latencyMs, change),
      stationChanged: (stationId) => admitter.stationChanged(stationId),
      resubscribed: () => admitter.resubscribed(),
    },
    logger,
    { reconnectDelayMs: options.redisReconnectDelayMs },
  );
  const admitter = new Admitter(admission, bridge, fanout, logger, metrics);
  await bridge.start();

  const lifecycle: Lifecycle = new Lifecycle(app, {
    config,
    logger,
    connections: () => websockets.size + sse.size,
    closeConnections: () => {
      websockets.close();
      sse.close(); // browsers reconnect with Last-Event-ID, to another node, and resume
    },
    closeServices: [() => bridge.close(), () => admission.close(), () => store.close()],
  });
  const draining = (): boolean => lifecycle.draining;
  const websockets = new WebSocketClients(app, { config, logger, admitter, tallies, draining });
  const sse = new SseClients(app, {
    config,
    logger,
    draining,
    admitNow: (conn) => admitter.admitNow(conn),
    admitLater: (conn) => admitter.admitLater(conn),
    release: (conn) => admitter.release(conn),
    start: (conn, sink, cork, corked) => admitter.start(conn, sink, cork, corked),
    subscribe: (conn, stream) => {
      if (conn.set) fanout.subscribeStream(conn.set, stream);
    },
    leave: (conn, stream) => conn.set?.streams.delete(stream),
    metrics: metrics
      ? { connections: tallies.sse.connections, slow: tallies.sse.slow, sent: (bytes) => tallies.sent(bytes, 1, 'sse') }
      : null,
    pingMs: options.ssePingMs ?? SSE_PING_MS,
  });
  admitter.serve(websockets);
  admitter.serve(sse);
  lifecycle.routes();

  const boundPort = await lifecycle.listen(port);
  return {
    port: boundPort,
    redisClientName: bridge.clientName,
    queries: () => store.queries,
    close: () => lifecycle.close(),
  };
}
