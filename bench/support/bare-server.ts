// Baseline for the benchmarks: a bare node:http server answering fixed bytes (200, or 304 when
// If-None-Match matches), i.e. the least work any HTTP server on this machine can do for that answer.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const body = readFileSync(process.argv[2]);
const etag = process.argv[3];
const port = Number(process.argv[4]);

createServer((req, res) => {
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { ETag: etag, 'Cache-Control': 'no-store' });
    res.end();
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length, ETag: etag, 'Cache-Control': 'no-store' });
  res.end(body);
}).listen(port, () => process.send?.('ready'));
