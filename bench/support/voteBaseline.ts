// The floor bench:inbox compares a vote with: a bare node:http server that, per PUT, reads and parses the
// JSON body and upserts one row (INSERT … ON CONFLICT DO UPDATE, autocommit, prepared) keyed by play and
// client, then answers. One round trip to Postgres; no credential, no station, no play on air to look up,
// no HMAC, no transaction, lock or counts.
// With a body file, a GET answers its bytes (the now-playing answer replayed): the same-process floor of
// the read ratio — reads served by a process that is taking the burst's upserts, as Waveline's web is.
// Usage (forked by bench/inbox.ts): voteBaseline.ts <port> <databaseUrl> [<bodyFile>]
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import pg from 'pg';

const [port, databaseUrl, bodyFile] = process.argv.slice(2);
const replay = bodyFile ? readFileSync(bodyFile) : null;
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
await pool.query(
  'CREATE TABLE IF NOT EXISTS bench_votes (play text NOT NULL, client text NOT NULL, value smallint NOT NULL, voted_at timestamptz NOT NULL, PRIMARY KEY (play, client))',
);

const server = createServer((req, res) => {
  if (req.method === 'GET' && replay) {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', etag: '"bench"', 'content-length': replay.length }).end(replay);
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { clientId: string; value: number };
      await pool.query({
        name: 'upsert',
        text: 'INSERT INTO bench_votes VALUES ($1, $2, $3, $4) ON CONFLICT (play, client) DO UPDATE SET value = EXCLUDED.value, voted_at = EXCLUDED.voted_at',
        values: [req.url ?? '/', body.clientId, body.value, new Date()],
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"value":${body.value}}`);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => {
  server.close();
  void pool.end();
});
