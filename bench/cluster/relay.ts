import * as uWS from 'uWebSockets.js';
import { Cluster, Redis } from 'ioredis';
import { processStats, serve } from '../fanout/proc.ts';

// bench:cluster's fan-out floor: a bare relay with no Waveline code. A uWebSockets.js app (the gateway's
// socket settings) whose listeners name their station as a gateway's do (`channels[]=stations.<id>.feed`);
// it subscribes a station's channel on Redis for the station's first listener only — SSUBSCRIBE through an
// ioredis Cluster with sharded subscribers (as the gateway does, with ioredis' defaults otherwise) on the
// cluster, SUBSCRIBE on one Redis — greets each socket with a `synced` frame (what the fleet waits for),
// and hands every message, as it came, to the station's sockets. No parsing, cursor, catch-up or checks.
// Usage (started by bench/cluster.ts): relay.ts <redis URL | comma-separated cluster seed URLs>

const [redisArg] = process.argv.slice(2);
const seeds = redisArg.split(',');
const sharded = seeds.length > 1;
const GREETING = '{"type":"synced","data":{"cursor":"c0","states":{}}}';

const cluster = sharded
  ? new Cluster(
      seeds.map((s) => {
        const url = new URL(s);
        return { host: url.hostname, port: Number(url.port) };
      }),
      { shardedSubscribers: true },
    )
  : null;
const subscriber: Redis | Cluster = cluster ?? new Redis(redisArg);
subscriber.on('error', () => {});
/** The channel a station's feed is published on (the names of src/lib/keys.ts, written out: no Waveline code). */
const channelOf = (station: string) => (sharded ? `waveline:feed:{${station}}` : `waveline:feed:${station}`);
/** uWS topic (the station id) of each subscribed channel. */
const topics = new Map<string, string>();
/** Each station's subscription (made for its first listener; later ones wait for it too). */
const subscribed = new Map<string, Promise<unknown>>();
const relay = (channel: string, message: Buffer) => {
  const topic = topics.get(channel);
  if (topic) app.publish(topic, message, false, false);
};
if (cluster) cluster.on('smessageBuffer', (channel: Buffer, message: Buffer) => relay(channel.toString(), message));
else subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => relay(channel.toString(), message));

const STATION = /channels(?:\[\]|%5B%5D)=stations\.([^.&]+)\.feed/;

const app = uWS.App();
app.ws<{ station: string }>('/*', {
  compression: 0,
  maxPayloadLength: 16 * 1024,
  maxBackpressure: 1024 * 1024,
  closeOnBackpressureLimit: true,
  idleTimeout: 120,
  sendPingsAutomatically: true,
  upgrade(res, req, context) {
    const station = decodeURIComponent(STATION.exec(req.getQuery() ?? '')?.[1] ?? '');
    res.upgrade(
      { station },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  },
  open(ws) {
    const { station } = ws.getUserData();
    ws.subscribe(station);
    let ready = subscribed.get(station);
    if (!ready) {
      const channel = channelOf(station);
      topics.set(channel, station);
      ready = cluster ? cluster.ssubscribe(channel) : (subscriber as Redis).subscribe(channel);
      subscribed.set(station, ready);
    }
    ready.then(
      () => {
        try {
          ws.send(GREETING, false, false);
        } catch {
          // closed meanwhile
        }
      },
      () => ws.end(1011),
    );
  },
});
const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
  app.listen('127.0.0.1', 0, (socket) => (socket ? resolve(socket) : reject(new Error('bare relay could not listen')))),
);
serve((message) => {
  if (message.type === 'port') return uWS.us_socket_local_port(listenSocket);
  if (message.type === 'stats') return processStats(message.collect === true);
  return null;
});
process.once('SIGTERM', () => {
  app.close();
  subscriber.disconnect();
  process.exit(0);
});
