import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP server standing in for a station backend that receives webhooks.

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  json: { type: string; timestamp: string; stationId: string; data: any };
  at: number;
}

/** How to answer the n-th request (0-based): a status, or 'hang' (never answer). */
export type Behaviour = (n: number, req: IncomingMessage, res: ServerResponse) => number | 'hang' | 'handled';

export interface Receiver {
  url: string;
  received: Received[];
  ofType(type: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(behaviour: Behaviour = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers, body, json: JSON.parse(body || 'null'), at: Date.now() });
      const answer = behaviour(n++, req, res);
      if (answer === 'hang' || answer === 'handled') return;
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    ofType: (type) => received.filter((r) => r.json?.type === type),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
