// bench:reads's floor (BENCH_FLOOR=1): loaded with `--import` into the Waveline process being measured, it
// serves bare's answer (bareAnswer.ts, as bareServer.ts does) on BENCH_FLOOR_PORT from inside that process, so
// the bench can measure what the same bytes cost when answered by the least code possible in a process
// that also holds Waveline (its heap, timers, sockets and the megamorphic Node internals they bring).
// `PUT /` sets the body (the request's) and the ETag (its `x-etag` header) for the next read.
import { createServer } from 'node:http';
import { bareAnswer } from './bareAnswer.ts';

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
    bareAnswer(req, res, body, etag);
  }).listen(port, '127.0.0.1');
}
