// The floor of bench:media's filesystem upload: a bare node:http server taking the request body, hashing
// it (SHA-256) and writing it to a file fsync'ed before it answers 201 — what the filesystem store does,
// without Waveline around it. Answers each POST; the file is removed after.
import { createHash } from 'node:crypto';
import { createWriteStream, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const [file, portText] = process.argv.slice(2);

createServer(async (req, res) => {
  const hash = createHash('sha256');
  const digest = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(req, digest, createWriteStream(file, { flush: true }));
  res.writeHead(201, { 'content-type': 'text/plain' }).end(hash.digest('hex'));
  rmSync(file, { force: true });
}).listen(Number(portText), () => process.send?.('ready'));
