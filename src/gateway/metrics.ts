import { counter, gauge, Tally, type Series } from '../lib/metrics.ts';

// The gateway's metrics (docs/operations.md, "Metrics"): connections, frames and bytes sent and slow
// consumers per transport — counted in tallies (lib/metrics.ts, `Tally`), since they change per
// connection and per frame — resyncs and subscribed stations. Listed in src/roles/metrics.ts.

const gatewayTallyList: Tally[] = [];
function flushGatewayTallies(): void {
  for (const tally of gatewayTallyList) tally.flush();
}

export const gatewayConnections = gauge({
  name: 'waveline_gateway_connections',
  help: 'Open feed connections.',
  labelNames: ['transport'] as const,
  collect: flushGatewayTallies,
});

export const gatewayFramesSent = counter({
  name: 'waveline_gateway_frames_sent_total',
  help: 'Feed frames sent to clients (one per receiving socket).',
  labelNames: ['transport'] as const,
  collect: flushGatewayTallies,
});

export const gatewayBytesSent = counter({
  name: 'waveline_gateway_bytes_sent_total',
  help: 'Bytes of feed frames sent to clients (frame payloads, one count per receiving socket).',
  labelNames: ['transport'] as const,
  collect: flushGatewayTallies,
});

export const gatewaySlowConsumerCloses = counter({
  name: 'waveline_gateway_slow_consumer_closes_total',
  help: 'Feed connections closed because the client read too slowly (GATEWAY_MAX_BACKPRESSURE_BYTES).',
  labelNames: ['transport'] as const,
  collect: flushGatewayTallies,
});

type TransportTallies = { connections: Tally; frames: Tally; bytes: Tally; slow: Tally };
const transportTallies = new Map<string, TransportTallies>();

/** The per-connection and per-frame series of a transport, as tallies (one set per process, shared by its gateways). */
export function gatewayTallies(transport: 'websocket' | 'sse'): TransportTallies {
  let tallies = transportTallies.get(transport);
  if (!tallies) {
    const tally = (series: Series) => {
      const made = new Tally(series);
      gatewayTallyList.push(made);
      return made;
    };
    tallies = {
      connections: tally(gatewayConnections.labels(transport)),
      frames: tally(gatewayFramesSent.labels(transport)),
      bytes: tally(gatewayBytesSent.labels(transport)),
      slow: tally(gatewaySlowConsumerCloses.labels(transport)),
    };
    transportTallies.set(transport, tallies);
  }
  return tallies;
}

export const gatewayResyncs = counter({
  name: 'waveline_gateway_resyncs_total',
  help: 'Times a station feed was re-read: redis_reconnect (catch-up after the subscriber reconnected), settings_changed (listeners closed with 1012 to start again from a snapshot).',
  labelNames: ['reason'] as const,
});

export const gatewayStations = gauge({
  name: 'waveline_gateway_stations_subscribed',
  help: 'Stations whose feed channel this gateway is subscribed to (it has listeners for them).',
});
