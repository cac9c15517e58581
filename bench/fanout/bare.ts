import * as uWS from 'uWebSockets.js';
import { Redis } from 'ioredis';
import { processStats, serve } from './proc.ts';

// The baseline: a bare uWebSockets.js app with the gateway's socket settings that publishes each frame it
// receives on a Redis channel to every socket, with no parsing, state or checks.
const [channel, maxBackpressure, greet = ''] = process.argv.slice(2);
/** bench:reconnect's floor: every new socket gets one small message (its `synced`), nothing else. */
const GREETING = '{"type":"synced","data":{"cursor":"c1","states":{}}}';
/**
 * bench:reconnect's floor with a resume's bytes (`resume:<bytes>`): an upgrade handler that hands the
 * request's query to the socket, as any app with a URL-addressed feed needs, and two messages of that
 * many payload bytes in all (a replayed event, then the `synced`).
 */
const resumeBytes = greet.startsWith('resume:') ? Number(greet.slice('resume:'.length)) : 0;
const REPLAYED = `{"type":"event","data":${JSON.stringify('x'.repeat(Math.max(0, resumeBytes - GREETING.length - 26)))}}`;
const TOPIC = 'bench';
const app = uWS.App();
app.ws<{ query: string }>('/*', {
  compression: 0,
  maxPayloadLength: 1024,
  maxBackpressure: Number(maxBackpressure),
  closeOnBackpressureLimit: true,
  idleTimeout: 120,
  sendPingsAutomatically: true,
  ...(resumeBytes > 0
    ? {
        upgrade(res: uWS.HttpResponse, req: uWS.HttpRequest, context: uWS.us_socket_context_t) {
          res.upgrade(
            { query: req.getQuery() ?? '' },
            req.getHeader('sec-websocket-key'),
            req.getHeader('sec-websocket-protocol'),
            req.getHeader('sec-websocket-extensions'),
            context,
          );
        },
      }
    : {}),
  open(ws) {
    ws.subscribe(TOPIC);
    if (resumeBytes > 0) ws.send(REPLAYED, false, false);
    if (greet) ws.send(GREETING, false, false);
  },
});
const subscriber = new Redis(process.env.REDIS_URL as string);
subscriber.on('message', (_channel: string, frame: string) => app.publish(TOPIC, frame, false, false));
await subscriber.subscribe(channel);
const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
  app.listen(0, (socket) => (socket ? resolve(socket) : reject(new Error('bare app could not listen')))),
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
