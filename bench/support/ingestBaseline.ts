// The floor bench:ingest compares Waveline with: a bare node:http server that, per POST, reads and
// parses the JSON body, stores it with one INSERT (autocommit, prepared) and publishes it on Redis, then
// answers. No validation, no dedupe or collapse rules, no rundown following, no second process.
// Usage (forked by bench/ingest.ts): ingestBaseline.ts <port> <databaseUrl> <redisUrl>
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';

const [port, databaseUrl, redisUrl] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
const redis = new Redis(redisUrl);
await pool.query(
  'CREATE TABLE IF NOT EXISTS bench_baseline (id uuid PRIMARY KEY, station text NOT NULL, body jsonb NOT NULL, received_at timestamptz NOT NULL)',
);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const station = new URL(req.url ?? '/', 'http://x').searchParams.get('stationSlug') ?? '';
      const now = new Date();
      await pool.query({
        name: 'insert',
        text: 'INSERT INTO bench_baseline VALUES ($1, $2, $3, $4)',
        values: [randomUUID(), station, body, now],
      });
      await redis.publish(`bench-baseline:${station}`, JSON.stringify({ body, at: now.toISOString() }));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"accepted":true,"outcome":"recorded"}');
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
});
server.listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => {
  server.close();
  void pool.end();
  redis.disconnect();
});
