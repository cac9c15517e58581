import { Queue, Worker, type Job, type Processor, type WorkerOptions } from 'bullmq';
import type { RedisTarget } from '../config.ts';
import { keys } from './keys.ts';
import type { Logger } from './logger.ts';
import { createBlockingRedis, createRedis, type Redis } from './redis.ts';
import { LocalQueue, LocalWorker, type LocalJob } from './embedded/localQueue.ts';

// One factory for every BullMQ queue and worker, with the production-guide defaults:
// producers fail fast (no offline queue), workers retry Redis forever, jobs are retained briefly.
// No connection here auto-pipelines: ioredis builds a Pipeline object per flush and copies every
// script defined on the connection into it — BullMQ defines 64 — which cost more web CPU per ingest
// (≈ 0.1 ms) than the writes it saved (docs/benchmarks.md#ingest).
// On a Redis Cluster each queue's keys carry the queue's own hash tag (src/lib/keys.ts), so BullMQ's
// multi-key scripts stay in one slot and the queues spread over the masters.
// One connection serves every queue of a process, and one every worker's regular commands (BullMQ takes
// a client it is handed as shared and leaves it open; it defines its scripts on it once): on a cluster
// each client is an ioredis Cluster — a connection per node and a slot map of its own to keep — so a
// process with a client per queue and per worker kept about twenty. Each worker still duplicates the
// connection for its blocking fetch (BZPOPMIN must not stall the others' commands); the producers' and
// the workers' connections stay apart because a blocking duplicate must retry forever, where producers
// fail fast (docs/operations.md#redis-cluster).
// Without Redis (the embedded default) both give the in-process adapter of the same shape
// (src/lib/embedded/localQueue.ts), so every queue and job declared in src/jobs.ts runs there unchanged.

export const DEFAULT_JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 24 * 3600, count: 5000 },
} as const;

/** The producers' connection (no offline queue, one retry: a request must not hang on a dead Redis), for every queue. */
export function createQueueConnection(target: RedisTarget, logger: Logger): Redis {
  const connection = createRedis(target, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  if (target.kind !== 'memory') connection.on('error', (err) => logger.warn({ err }, 'queue connection error'));
  return connection;
}

/** The workers' connection for their regular commands; it retries forever, as their blocking duplicates must. */
export function createWorkerConnection(target: RedisTarget, logger: Logger): Redis {
  const connection = createBlockingRedis(target);
  if (target.kind !== 'memory') connection.on('error', (err) => logger.warn({ err }, 'worker connection error'));
  return connection;
}

/**
 * A producer of queue `name` on `shared` (createQueueConnection: the caller closes it after the queues),
 * or on a connection of its own, returned as `connection`.
 */
export function createQueue(name: string, target: RedisTarget, logger: Logger, shared?: Redis): { queue: Queue; connection: Redis } {
  const connection = shared ?? createQueueConnection(target, logger);
  if (target.kind === 'memory') return { queue: new LocalQueue(name, DEFAULT_JOB_OPTIONS) as unknown as Queue, connection };
  const queue = new Queue(name, { connection, prefix: keys.queuePrefix(name), defaultJobOptions: DEFAULT_JOB_OPTIONS });
  queue.on('error', (err) => logger.warn({ err, queue: name }, 'queue error'));
  return { queue, connection };
}

/**
 * A worker of queue `name`. Its regular commands go on `shared` (createWorkerConnection: the caller closes
 * it once every worker on it has closed), or on a connection of its own, closed with the worker.
 */
export function createWorker(
  name: string,
  processor: Processor,
  target: RedisTarget,
  logger: Logger,
  options: Partial<WorkerOptions> = {},
  shared?: Redis,
): Worker {
  if (target.kind === 'memory') {
    const worker = new LocalWorker(name, processor as unknown as (job: LocalJob) => Promise<unknown>, options);
    worker.on('failed', (job: LocalJob, err: Error) => logger.warn({ err, job: job.name, id: job.id }, 'job failed'));
    return worker as unknown as Worker;
  }
  const connection = shared ?? createWorkerConnection(target, logger);
  const worker = new Worker(name, processor, { connection, prefix: keys.queuePrefix(name), concurrency: 4, ...options });
  worker.on('error', (err) => logger.error({ err, queue: name }, 'worker error'));
  // BullMQ leaves a connection it was handed open; close one of the worker's own with it.
  if (!shared) worker.on('closed', () => connection.disconnect());
  worker.on('failed', (job: Job | undefined, err: Error) => logger.warn({ err, job: job?.name, id: job?.id }, 'job failed'));
  return worker;
}
