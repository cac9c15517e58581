import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Bare's answer: the fixed bytes with their ETag (304 when If-None-Match matches), the least work any
 * node:http server can do for it. Served by bareServer.ts in a process of its own and by
 * inProcessBare.ts from inside a measured Waveline process.
 */
export function bareAnswer(req: IncomingMessage, res: ServerResponse, body: Buffer, etag: string): void {
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { ETag: etag, 'Cache-Control': 'no-store' });
    res.end();
    return;
  }
  res.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': body.length,
    ETag: etag,
    'Cache-Control': 'no-store',
  });
  res.end(body);
}
