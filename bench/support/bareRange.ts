// The baseline of bench:media's range reads: a bare node:http server sending one byte range of a file
// from disk (206 with Content-Range), the least work any server here can do for that answer. With a
// database URL and an object key, it reads the range from the postgres store's chunks instead (one
// `substring` query per request, as the store does), or with an S3 endpoint from the object
// `bare/episode.mp3` of the bucket `bench` (one ranged GetObject per request): those stores' floors.
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Readable } from 'node:stream';
import pg from 'pg';

const [file, portText, source, objectKey] = process.argv.slice(2);
const size = statSync(file).size;
const CHUNK = 1024 * 1024;
const pool = source?.startsWith('postgres') ? new pg.Pool({ connectionString: source, max: 10 }) : null;
const s3 = source?.startsWith('http')
  ? new S3Client({
      endpoint: source,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      responseChecksumValidation: 'WHEN_REQUIRED',
    })
  : null;

createServer(async (req, res) => {
  const match = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  const start = match ? Number(match[1]) : 0;
  const end = match ? Math.min(Number(match[2]), size - 1) : size - 1;
  res.writeHead(match ? 206 : 200, {
    'content-length': end - start + 1,
    'accept-ranges': 'bytes',
    ...(match ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
  });
  if (s3) {
    const object = await s3.send(new GetObjectCommand({ Bucket: 'bench', Key: 'bare/episode.mp3', Range: `bytes=${start}-${end}` }));
    return (object.Body as Readable).pipe(res);
  }
  if (!pool) return createReadStream(file, { start, end }).pipe(res);
  // One chunk covers the benchmark's range.
  const seq = Math.floor(start / CHUNK);
  const { rows } = await pool.query(
    'SELECT substring(bytes FROM $1::int FOR $2::int) AS bytes FROM media_chunks WHERE object_key = $3 AND seq = $4',
    [start - seq * CHUNK + 1, end - start + 1, objectKey, seq],
  );
  res.end(rows[0].bytes);
}).listen(Number(portText), () => process.send?.('ready'));
