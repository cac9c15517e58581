// First, every role's metrics in the order /metrics lists them (src/roles/metrics.ts: the files it lists
// import only lib/metrics.ts, so no station schema is built before the features register).
import '../src/roles/metrics.ts';
// Every feature's station setting is registered before anything builds the station schemas.
import '../src/features.ts';
import type { Job, Worker } from 'bullmq';
import type { Config } from '../src/config.ts';
import { JOBS, QUEUES, isAwaited, parsePayload, type JobName, type QueueName } from '../src/jobs.ts';
import { createLogger } from '../src/lib/logger.ts';
import { createWorker, createWorkerConnection } from '../src/lib/queue.ts';
import { initMetrics, metricsEnabled } from '../src/lib/metrics.ts';
import { jobDuration, jobsCompleted, jobsFailed, jobsRetried, jobsStalled, setQueueCountsSource } from './metrics.ts';
import { startWorkerHttp } from './http.ts';
import { Shutdown } from '../src/lib/shutdown.ts';
import { createServices } from '../src/roles/services.ts';
import type { Services } from '../src/services.ts';
import { registry, type JobHandler } from './registry.ts';
import { scheduleFeedPrune } from './feedPrune.ts';
import { scheduleAuditPrune } from './auditPrune.ts';
import { scheduleAudience } from './audience.ts';
import { scheduleInboxPrune } from './inboxPrune.ts';
import { scheduleMediaSweep } from './mediaSweep.ts';
import { ensurePushSweep } from '../src/domains/push/notifications/maintenance.ts';
import { CHECK_CONCURRENCY } from '../src/domains/artwork/model.ts';
import { ensureReminderTick } from '../src/domains/reminders/fire.ts';

/** How many jobs of each queue one worker process runs at once. Media is CPU-bound (sharp); webhook
 * deliveries mostly wait on receivers (and one endpoint holds only a few of them, docs/webhooks.md). */
// Push jobs mostly wait on their station's pace and on providers: enough slots that stations sending at
// once all progress.
// Artwork checks mostly wait on image hosts (at most 10 s each): eight at a time, so a hanging host never
// holds back another URL's check; each holds at most one 10 MiB body, and sharp decodes are bounded
// apart (src/domains/artwork/model.ts).
const CONCURRENCY: Record<QueueName, number> = {
  default: 8,
  ingest: 16,
  media: 1,
  webhooks: 256,
  'webhooks-retry': 64,
  push: 16,
  artwork: CHECK_CONCURRENCY,
};
/**
 * A delivery takes at most 5 s: a shorter lock lets a crashed worker's delivery be retried sooner. A push
 * job that lost its lock may run twice at once without harm (its devices are claimed, docs/push.md): a
 * short lock, checked twice as often, lets another worker take over a dead worker's notification within
 * seconds, and a lock lost to a stalled event loop only re-runs the job.
 */
const LOCK_MS: Partial<Record<QueueName, number>> = { webhooks: 10_000, 'webhooks-retry': 10_000, push: 4_000 };
const STALLED_CHECK_MS: Partial<Record<QueueName, number>> = { push: 2_000 };
const MAX_STALLED: Partial<Record<QueueName, number>> = { push: 10 };

/** Starts one BullMQ worker per queue; `close()` waits for running jobs to finish. */
export async function startWorkers(svc: Services): Promise<{ workers: Worker[]; close(): Promise<void> }> {
  const lockMs = svc.config.observability.workerLockSeconds * 1000;
  // One connection for every worker's regular commands; each worker duplicates it for its blocking fetch.
  const connection = createWorkerConnection(svc.config.redis, svc.logger);
  const workers = QUEUES.map((queue) =>
    createWorker(
      queue,
      (job: Job) => (metricsEnabled() ? measured(job, run) : run(job)),
      svc.config.redis,
      svc.logger,
      // A killed worker's jobs are taken over by another once their lock lapses (checked as often); webhook
      // deliveries take at most 5 s, so their shorter lock retries a crashed worker's delivery sooner.
      {
        concurrency: CONCURRENCY[queue],
        lockDuration: Math.min(lockMs, LOCK_MS[queue] ?? lockMs),
        stalledInterval: Math.min(lockMs, STALLED_CHECK_MS[queue] ?? LOCK_MS[queue] ?? lockMs),
        maxStalledCount: MAX_STALLED[queue] ?? 1,
      },
      connection,
    ),
  );
  async function run(job: Job): Promise<unknown> {
    const name = job.name as JobName;
    if (!(name in JOBS)) throw new Error(`unknown job ${job.name}`);
    const handler = registry[name] as JobHandler<JobName>;
    const jobId = job.id;
    if (!isAwaited(name) || jobId === undefined) return handler(parsePayload(name, job.data), svc, job, async () => undefined);
    // A request may be waiting for this one: tell it how the job ended (src/lib/jobResults.ts), once,
    // as soon as the handler has its answer.
    let answered = false;
    const answer = async (value: unknown) => {
      if (answered) return;
      answered = true;
      await svc.jobResults.report(jobId, { ok: true, value });
    };
    try {
      const value = await handler(parsePayload(name, job.data), svc, job, answer);
      await answer(value);
      return value;
    } catch (err) {
      if (!answered) await svc.jobResults.report(jobId, { ok: false });
      throw err;
    }
  }
  for (const [i, worker] of workers.entries()) worker.on('stalled', () => jobsStalled.labels(QUEUES[i]).inc());
  setQueueCountsSource(() => svc.jobs.counts());
  await scheduleFeedPrune(svc);
  await scheduleAuditPrune(svc);
  await scheduleAudience(svc);
  await scheduleInboxPrune(svc);
  await scheduleMediaSweep(svc);
  await ensurePushSweep(svc).catch((err) => svc.logger.warn({ err }, 'could not register the push sweep'));
  await ensureReminderTick(svc).catch((err) => svc.logger.warn({ err }, 'could not register the reminders tick'));
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  svc.logger.info({ queues: QUEUES }, 'workers ready');
  return {
    workers,
    close: async () => {
      setQueueCountsSource(null);
      await Promise.all(workers.map((w) => w.close()));
      connection.disconnect();
    },
  };
}

/** Runs a job attempt and counts it: completed, failed for good, or failed with a retry to come. */
async function measured(job: Job, run: (job: Job) => Promise<unknown>): Promise<unknown> {
  const started = performance.now();
  const name = job.name in JOBS ? job.name : 'unknown';
  try {
    const value = await run(job);
    jobDuration.labels(name, 'completed').observe((performance.now() - started) / 1000);
    jobsCompleted.labels(name).inc();
    return value;
  } catch (err) {
    jobDuration.labels(name, 'failed').observe((performance.now() - started) / 1000);
    // attemptsMade counts the attempts that failed before this one; UnrecoverableError is never retried.
    const retries = (err as Error)?.name !== 'UnrecoverableError' && job.attemptsMade + 1 < (job.opts.attempts ?? 1);
    (retries ? jobsRetried : jobsFailed).labels(name).inc();
    throw err;
  }
}

export async function run(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config, 'worker');
  initMetrics(config.observability);
  const shutdown = new Shutdown(logger);
  // Signals are handled from the start: "workers ready" is logged before the worker's HTTP port opens,
  // and a SIGTERM in between must still close what is running and exit 0.
  shutdown.listen();
  const svc = await createServices(config, logger);
  shutdown.add('services', () => svc.close());
  const workers = await startWorkers(svc);
  shutdown.add('workers', () => workers.close());
  const http = await startWorkerHttp(svc, workers.workers, config.observability.workerPort);
  shutdown.add('http', () => http.close());
}
