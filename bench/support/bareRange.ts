// The baseline of bench:media's range reads: a bare node:http server sending one byte range of a file
// from disk (206 with Content-Range), the least work any server here can do for that answer.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';

const [file, portText] = process.argv.slice(2);
const size = statSync(file).size;

createServer((req, res) => {
  const match = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  const start = match ? Number(match[1]) : 0;
  const end = match ? Math.min(Number(match[2]), size - 1) : size - 1;
  res.writeHead(match ? 206 : 200, {
    'content-length': end - start + 1,
    'accept-ranges': 'bytes',
    ...(match ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
  });
  createReadStream(file, { start, end }).pipe(res);
}).listen(Number(portText), () => process.send?.('ready'));
