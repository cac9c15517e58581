// bench:ticks's server: bare node:http answering fixed bytes, with a full collection every
// TICKS_GC_MS (as a busy process's old generation is collected) and, when TICKS_KEEP=1, one tick
// object kept (lib/tickShapes.ts). Run with --expose-gc.
import { createServer } from 'node:http';
import { keepTickShapes } from '../../src/lib/tickShapes.ts';

if (process.env.TICKS_KEEP === '1') keepTickShapes();
const body = Buffer.from(JSON.stringify({ track: { title: 'A track', artist: 'An artist' }, elapsedSeconds: 42 }));
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
setInterval(gc, Number(process.env.TICKS_GC_MS ?? 1000)).unref();
createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length, 'Cache-Control': 'no-store' });
  res.end(body);
}).listen(Number(process.env.PORT), () => process.send?.('ready'));
