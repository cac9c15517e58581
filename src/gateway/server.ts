import * as uWS from 'uWebSockets.js';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';

// The realtime gateway. It never imports Koa or knex: it speaks to Redis only.

export interface Gateway {
  port: number;
  close(): Promise<void>;
}

export async function startGateway(config: Readonly<Config>, logger: Logger, port: number): Promise<Gateway> {
  const app = uWS.App();
  let draining = false;
  app.get('/healthz', (res) => {
    res.writeStatus(draining ? '503 Service Unavailable' : '200 OK');
    res.writeHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ ok: !draining }));
  });
  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen(port, (socket) => (socket ? resolve(socket) : reject(new Error(`gateway could not listen on port ${port}`))));
  });
  const boundPort = uWS.us_socket_local_port(listenSocket);
  logger.info({ port: boundPort }, 'gateway listening');
  return {
    port: boundPort,
    async close() {
      draining = true;
      uWS.us_listen_socket_close(listenSocket);
      app.close();
    },
  };
}
