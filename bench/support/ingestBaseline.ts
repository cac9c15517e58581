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
//
// `feed-job <bytes>` does the same and, like Waveline's ingest, the Redis work of rundown following
// (docs/benchmarks.md, "Redis Cluster and read replicas"): once the row is stored, beside the publish, it
// adds one BullMQ job `nowPlaying.follow` to the queue `ingest` under the row's id and waits for its result
// on the results channel before answering, a bare worker process (bareJobWorker.ts) completing it. Queue,
// prefix, hash tag, job options, connections and the result channel are Waveline's, written out in
// bareJobs.ts. A job whose result does not come within 2 s is answered like Waveline's (200, `recorded`)
// and counted: GET /stats answers `{ jobs, jobTimeouts }`.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Cluster, Redis } from 'ioredis';
import { Queue } from 'bullmq';
import {
  DEFAULT_JOB_OPTIONS,
  FOLLOW_WAIT_MS,
  JOB_NAME,
  QUEUE,
  RESULTS_CHANNEL,
  producerConnection,
  queuePrefix,
  resultSubscriber,
} from './bareJobs.ts';

const [port, databaseUrl, redisUrl, mode = '', bytes = '0'] = process.argv.slice(2);
const withJob = mode === 'feed-job';
const feed = mode === 'feed' || withJob;
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

/** The awaited job of `feed-job`: its queue (on the producers' connection) and the waiters of its results. */
const jobs = withJob ? await startJobs() : null;
let jobsAdded = 0;
let jobTimeouts = 0;

async function startJobs() {
  const connection = producerConnection(redisUrl);
  connection.on('error', () => {});
  const queue = new Queue(QUEUE, { connection, prefix: queuePrefix(redisUrl), defaultJobOptions: DEFAULT_JOB_OPTIONS });
  queue.on('error', () => {});
  await queue.waitUntilReady();
  const subscriber = resultSubscriber(redisUrl);
  subscriber.on('error', () => {});
  const waiters = new Map<string, (value: unknown) => void>();
  subscriber.on('message', (channel: string, message: string) => {
    if (channel !== RESULTS_CHANNEL) return;
    let parsed: { id?: unknown; ok?: unknown; value?: unknown };
    try {
      parsed = JSON.parse(message) as typeof parsed;
    } catch {
      return;
    }
    if (typeof parsed.id === 'string') waiters.get(parsed.id)?.(parsed.ok === true ? parsed.value : undefined);
  });
  await subscriber.subscribe(RESULTS_CHANNEL);
  /** Adds the job under `jobId`, listening first, and resolves with its result, or undefined after FOLLOW_WAIT_MS. */
  const run = async (jobId: string, stationId: string): Promise<unknown> => {
    const result = new Promise<unknown>((resolve) => {
      const timer = setTimeout(() => {
        waiters.delete(jobId);
        jobTimeouts++;
        resolve(undefined);
      }, FOLLOW_WAIT_MS);
      waiters.set(jobId, (value) => {
        clearTimeout(timer);
        waiters.delete(jobId);
        resolve(value);
      });
    });
    jobsAdded++;
    await queue.add(JOB_NAME, { observationId: jobId, stationId }, { jobId, removeOnComplete: true });
    return result;
  };
  return { queue, connection, subscriber, run };
}

/** The feed message of one ingest: a now-playing frame carrying the body, padded to `bytes`. */
function feedMessage(body: unknown, at: string): string {
  const bare = `{"type":"event","data":{"kind":"now-playing","at":"${at}","body":${JSON.stringify(body)},"pad":""}}`;
  return bare.replace('"pad":""', `"pad":"${'x'.repeat(Math.max(0, Number(bytes) - bare.length))}"`);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jobs: jobsAdded, jobTimeouts }));
      return;
    }
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      const station = (feed ? query.get('station') : query.get('stationSlug')) ?? '';
      const now = new Date();
      const id = randomUUID();
      await pool.query({
        name: 'insert',
        text: 'INSERT INTO bench_baseline VALUES ($1, $2, $3, $4)',
        values: [id, station, body, now],
      });
      let published: Promise<unknown>;
      if (!feed) published = redis.publish(`bench-baseline:${station}`, JSON.stringify({ body, at: now.toISOString() }));
      else if (cluster) published = cluster.spublish(`waveline:feed:{${station}}`, feedMessage(body, now.toISOString()));
      else published = redis.publish(`waveline:feed:${station}`, feedMessage(body, now.toISOString()));
      // feed-job: the job is added as the publish goes out, neither waiting for the other (as Waveline's ingest).
      if (jobs) await Promise.all([published, jobs.run(id, station)]);
      else await published;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"accepted":true,"outcome":"recorded"}');
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
});
server.listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', async () => {
  server.close();
  void pool.end();
  redis.disconnect();
  if (jobs) {
    await jobs.queue.close().catch(() => {});
    jobs.connection.disconnect();
    jobs.subscriber.disconnect();
    process.exit(0);
  }
});
