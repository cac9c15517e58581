// bench:reads's floors (BENCH_FLOOR=1): loaded with `--import` into the Waveline process being measured,
// it serves bare's answer (bareAnswer.ts, as bareServer.ts does) on BENCH_FLOOR_PORT from inside that
// process, so the bench can measure what the same bytes cost when answered by the least code possible in
// a process that also holds Waveline (its heap, timers, sockets and the megamorphic Node internals they
// bring); on `/contract`, the least a conforming answer needs (`contractAnswer`: the credential's hash,
// the request id, the CORS headers). `PUT /` sets the body (the request's), the ETag (its `x-etag`
// header) and the listener token (`x-token`, absent for an anonymous read) for the next reads.
import { hash } from 'node:crypto';
import { createServer } from 'node:http';
import { bareAnswer, contractAnswer } from './bareAnswer.ts';

const port = Number(process.env.BENCH_FLOOR_PORT);
if (port) {
  let body = Buffer.alloc(0);
  let etag = '""';
  let tokenHash: string | null = null;
  createServer((req, res) => {
    if (req.method === 'PUT') {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        body = Buffer.concat(chunks);
        etag = String(req.headers['x-etag'] ?? '""');
        const token = req.headers['x-token'];
        tokenHash = typeof token === 'string' ? hash('sha256', token, 'hex') : null;
        res.writeHead(204).end();
      });
      return;
    }
    if (req.url === '/contract') contractAnswer(req, res, body, etag, tokenHash);
    else bareAnswer(req, res, body, etag);
  }).listen(port, '127.0.0.1');
}
