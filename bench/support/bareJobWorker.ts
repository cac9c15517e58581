// bench:cluster's `feed-job` floor, the worker side: a bare BullMQ Worker process on the `ingest` queue,
// configured as Waveline's worker role configures that queue's (bareJobs.ts), that completes each job
// doing nothing but return a small result and report it on the results channel — as Waveline's worker
// does for an awaited job — so the bare ingest servers' requests can answer. A separate process, as
// Waveline's worker is (docs/benchmarks.md, "Redis Cluster and read replicas").
// Usage (forked by bench/cluster.ts): bareJobWorker.ts <redis URL | comma-separated cluster seed URLs>
// Sends `ready` once the worker fetches jobs.
import { Worker, type Job } from 'bullmq';
import { QUEUE, RESULTS_CHANNEL, WORKER_OPTIONS, queuePrefix, resultPublisher, workerConnection } from './bareJobs.ts';

const [redisArg] = process.argv.slice(2);
const connection = workerConnection(redisArg);
const publisher = resultPublisher(redisArg);
for (const conn of [connection, publisher]) conn.on('error', () => {});

const RESULT = { accepted: true, outcome: 'recorded' };

const worker = new Worker(
  QUEUE,
  async (job: Job) => {
    // Reported before BullMQ marks the job completed, as Waveline's worker does (a report never throws).
    await publisher.publish(RESULTS_CHANNEL, JSON.stringify({ id: job.id, ok: true, value: RESULT })).catch(() => 0);
    return RESULT;
  },
  { connection, prefix: queuePrefix(redisArg), ...WORKER_OPTIONS },
);
worker.on('error', () => {});
await worker.waitUntilReady();
process.send?.('ready');

process.once('SIGTERM', async () => {
  await worker.close().catch(() => {});
  connection.disconnect();
  publisher.disconnect();
  process.exit(0);
});
