// bench:reads's floor (BENCH_FLOOR=1): loaded with `--import` into the Waveline process being measured, it
// serves bare's handler (bareServer.ts, kind `node`) on BENCH_FLOOR_PORT from inside that process, so
// the bench can measure what the same bytes cost when answered by the least code possible in a process
// that also holds Waveline (its heap, timers, sockets and the megamorphic Node internals they bring).
// `PUT /` sets the body (the request's) and the ETag (its `x-etag` header) for the next read.
import { createServer } from 'node:http';

const port = Number(process.env.BENCH_FLOOR_PORT);
if (port) {
  let body = Buffer.alloc(0);
  let etag = '""';
  createServer((req, res) => {
    if (req.method === 'PUT') {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        body = Buffer.concat(chunks);
        etag = String(req.headers['x-etag'] ?? '""');
        res.writeHead(204).end();
      });
      return;
    }
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
  }).listen(port, '127.0.0.1');
}
