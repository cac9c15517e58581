import type { Job, Worker } from 'bullmq';
import type { Config } from '../src/config.ts';
import { JOBS, QUEUES, isAwaited, parsePayload, type JobName, type QueueName } from '../src/jobs.ts';
import { createLogger } from '../src/lib/logger.ts';
import { createWorker } from '../src/lib/queue.ts';
import { Shutdown } from '../src/lib/shutdown.ts';
import { createServices, type Services } from '../src/services.ts';
import { registry, type JobHandler } from './registry.ts';

/** How many jobs of each queue one worker process runs at once. Media is CPU-bound (sharp); webhook
 * deliveries mostly wait on receivers (and one endpoint holds only a few of them, docs/webhooks.md). */
const CONCURRENCY: Record<QueueName, number> = { default: 8, ingest: 16, media: 1, webhooks: 256, 'webhooks-retry': 64 };
/** A delivery takes at most 5 s: a shorter lock lets a crashed worker's delivery be retried sooner. */
const LOCK_MS: Partial<Record<QueueName, number>> = { webhooks: 10_000, 'webhooks-retry': 10_000 };

/** Starts one BullMQ worker per queue; `close()` waits for running jobs to finish. */
export async function startWorkers(svc: Services): Promise<{ workers: Worker[]; close(): Promise<void> }> {
  const workers = QUEUES.map((queue) =>
    createWorker(
      queue,
      async (job: Job) => {
        const name = job.name as JobName;
        if (!(name in JOBS)) throw new Error(`unknown job ${job.name}`);
        const handler = registry[name] as JobHandler<JobName>;
        if (!isAwaited(name) || job.id === undefined) return handler(parsePayload(name, job.data), svc, job);
        // A request may be waiting for this one: tell it how the job ended (src/lib/jobResults.ts).
        try {
          const value = await handler(parsePayload(name, job.data), svc, job);
          await svc.jobResults.report(job.id, { ok: true, value });
          return value;
        } catch (err) {
          await svc.jobResults.report(job.id, { ok: false });
          throw err;
        }
      },
      svc.config.redisUrl,
      svc.logger,
      { concurrency: CONCURRENCY[queue], ...(LOCK_MS[queue] ? { lockDuration: LOCK_MS[queue], stalledInterval: LOCK_MS[queue] / 2 } : {}) },
    ),
  );
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  svc.logger.info({ queues: QUEUES }, 'workers ready');
  return {
    workers,
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}

export async function run(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config, 'worker');
  const shutdown = new Shutdown(logger);
  const svc = await createServices(config, logger);
  shutdown.add('services', () => svc.close());
  const workers = await startWorkers(svc);
  shutdown.add('workers', () => workers.close());
  shutdown.listen();
}
