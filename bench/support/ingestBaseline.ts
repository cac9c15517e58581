// The floor bench:ingest compares Waveline with: a bare node:http server that, per POST, reads and
// parses the JSON body, stores it with one INSERT (autocommit, prepared) and publishes it on Redis, then
// answers. No validation, no dedupe or collapse rules, no rundown following, no second process.
// Usage (forked by bench/ingest.ts, bench/inbox.ts): ingestBaseline.ts <port> <databaseUrl> <redisUrl>
//
// bench:cluster's ingest and fan-out floor adds two arguments: `feed <bytes>`. The station is then the
// `station` query parameter and the message goes to its feed channel as Waveline names it — SPUBLISH on
// `waveline:feed:{<station>}` through an ioredis Cluster (ioredis' defaults) when <redisUrl> is a
// comma-separated list of cluster seeds, PUBLISH on `waveline:feed:<station>` on one Redis — as a
// now-playing frame padded to <bytes> (the size of Waveline's frames in the same run), which the bare
// relays (bench/cluster/relay.ts) hand to the station's listeners as it is.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Cluster, Redis } from 'ioredis';

const [port, databaseUrl, redisUrl, mode = '', bytes = '0'] = process.argv.slice(2);
const feed = mode === 'feed';
const seeds = redisUrl.split(',');
const cluster =
  seeds.length > 1
    ? new Cluster(
        seeds.map((s) => {
          const url = new URL(s);
          return { host: url.hostname, port: Number(url.port) };
        }),
      )
    : null;
const redis = cluster ?? new Redis(redisUrl);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
await pool.query(
  'CREATE TABLE IF NOT EXISTS bench_baseline (id uuid PRIMARY KEY, station text NOT NULL, body jsonb NOT NULL, received_at timestamptz NOT NULL)',
);

/** The feed message of one ingest: a now-playing frame carrying the body, padded to `bytes`. */
function feedMessage(body: unknown, at: string): string {
  const bare = `{"type":"event","data":{"kind":"now-playing","at":"${at}","body":${JSON.stringify(body)},"pad":""}}`;
  return bare.replace('"pad":""', `"pad":"${'x'.repeat(Math.max(0, Number(bytes) - bare.length))}"`);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      const station = (feed ? query.get('station') : query.get('stationSlug')) ?? '';
      const now = new Date();
      await pool.query({
        name: 'insert',
        text: 'INSERT INTO bench_baseline VALUES ($1, $2, $3, $4)',
        values: [randomUUID(), station, body, now],
      });
      if (!feed) await redis.publish(`bench-baseline:${station}`, JSON.stringify({ body, at: now.toISOString() }));
      else if (cluster) await cluster.spublish(`waveline:feed:{${station}}`, feedMessage(body, now.toISOString()));
      else await redis.publish(`waveline:feed:${station}`, feedMessage(body, now.toISOString()));
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
