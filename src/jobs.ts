import type { Queue, JobsOptions } from 'bullmq';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { createQueue, createQueueConnection } from './lib/queue.ts';
import type { JobResults } from './lib/jobResults.ts';
import type { Logger } from './lib/logger.ts';
import type { Redis } from './lib/redis.ts';
import type { RedisTarget } from './config.ts';
import { checkPayload } from './lib/payload.ts';
import { isRedisUnavailable, RedisUnavailableError } from './lib/errors.ts';

// Job names, their queues and payload schemas: the only part of the job system the web role imports.
// Queues separate latency-sensitive work (ingest) from CPU-heavy work (media) so neither starves.

// Webhook deliveries have queues of their own: receivers' latency never holds up the other jobs, and
// retries (and endpoints known to be failing) wait on `webhooks-retry`, never in front of fresh events
// to healthy endpoints (docs/webhooks.md, "Design").
// Push notifications have a queue of their own: a station's big alert (paced, minutes long) never
// occupies the slots other jobs run in (docs/push.md).
export const QUEUES = ['default', 'ingest', 'media', 'webhooks', 'webhooks-retry', 'push', 'artwork'] as const;
export type QueueName = (typeof QUEUES)[number];

const WEBHOOK_DELIVERY = Type.Object({
  webhookId: Type.String({ format: 'uuid' }),
  stationId: Type.String({ minLength: 1 }),
  eventId: Type.String({ minLength: 1 }),
  type: Type.String({ minLength: 1 }),
  timestamp: Type.String({ format: 'date-time' }),
  data: Type.Unknown(),
  attempt: Type.Integer({ minimum: 1 }),
});

export const JOBS = {
  'health.ping': { queue: 'default', payload: Type.Object({ at: Type.String() }) },
  // Schedule timers (src/domains/schedule/timers.ts): `at` is the planned instant, ISO 8601 UTC.
  'schedule.midnight': {
    queue: 'default',
    payload: Type.Object({ stationId: Type.String({ minLength: 1 }), at: Type.String({ format: 'date-time' }) }),
  },
  'schedule.boundary': {
    queue: 'default',
    payload: Type.Object({ stationId: Type.String({ minLength: 1 }), at: Type.String({ format: 'date-time' }) }),
  },
  'schedule.sweep': { queue: 'default', payload: Type.Object({}) },
  /** Renders an uploaded image version's variants; job id = versionId (docs/media.md). */
  'media.variants': { queue: 'media', payload: Type.Object({ stationId: Type.String(), versionId: Type.String() }) },
  /** Renders a station's RadioDNS logo renditions (PNG, letterboxed); job id = `radiodns-logos-{versionId}` (docs/radiodns.md). */
  'radiodns.logos': { queue: 'media', payload: Type.Object({ stationId: Type.String(), versionId: Type.String() }) },
  /** Re-presents records using a version a little after its variants were stored (docs/media.md). */
  'media.refresh': { queue: 'default', payload: Type.Object({ stationId: Type.String(), versionId: Type.String() }) },
  /** Hourly: removes pre-signed uploads expired and never completed, their bytes included (src/domains/media/sweep.ts). */
  'media.sweep': { queue: 'default', payload: Type.Object({}) },
  'feeds.poll': {
    queue: 'default',
    payload: Type.Object({ stationId: Type.String(), feed: Type.Union([Type.Literal('weather'), Type.Literal('traffic')]) }),
  },
  /** Rundown following of one stored observation; job id = observation id. The ingest request awaits it. */
  'nowPlaying.follow': {
    queue: 'ingest',
    // stationId saves the worker a look-up (it locks the station before reading); optional for older jobs.
    // resolveArt: the job resolves the track's art once it has answered (instead of an artwork.resolve job).
    payload: Type.Object({
      observationId: Type.String({ format: 'uuid' }),
      stationId: Type.Optional(Type.String({ minLength: 1 })),
      resolveArt: Type.Optional(Type.Boolean()),
    }),
    awaited: true,
  },
  /** Third-party artwork lookup for one stored observation (src/domains/artwork/catalogue/); job id = `artwork-{observation id}`. */
  'nowPlaying.artwork': { queue: 'default', payload: Type.Object({ observationId: Type.String({ format: 'uuid' }) }) },
  /** Resolves the track art of one stored observation (src/domains/artwork/resolve.ts). */
  'artwork.resolve': { queue: 'artwork', payload: Type.Object({ observationId: Type.String({ format: 'uuid' }) }) },
  /** Fetches and checks one image URL for a station; job id = `artwork-check.{stationId}.{url hash}.{day}` (docs/now-playing.md). */
  'artwork.check': {
    queue: 'artwork',
    payload: Type.Object({
      stationId: Type.String({ minLength: 1 }),
      url: Type.String({ minLength: 1 }),
      source: Type.Union([Type.Literal('operator'), Type.Literal('ingest'), Type.Literal('catalogue')]),
    }),
  },
  /** One attempt of one webhook event to one endpoint; job id = `whd.{eventId}.{webhookId}.{attempt}` (docs/webhooks.md). */
  'webhooks.deliver': { queue: 'webhooks', payload: WEBHOOK_DELIVERY },
  /** The same for a retry, or a first attempt to an endpoint that is failing: the slow lane. */
  'webhooks.retry': { queue: 'webhooks-retry', payload: WEBHOOK_DELIVERY },
  /** Hourly: prunes feed tombstones older than the resume history (src/feed/rows.ts, pruneFeedHistory). */
  'feed.prune': { queue: 'default', payload: Type.Object({}) },
  /** Daily: drops audit entries older than 400 days (src/domains/audit/store.ts, pruneAuditLog). */
  'audit.prune': { queue: 'default', payload: Type.Object({}) },
  /** Every AUDIENCE_POLL_SECONDS: every stream's listener count (src/domains/audience/poll.ts). */
  'audience.poll': { queue: 'default', payload: Type.Object({}) },
  /** Every AUDIENCE_POLL_SECONDS: fixes the performances of plays that ended (src/domains/audience/performances.ts). */
  'audience.fix': { queue: 'default', payload: Type.Object({}) },
  /** Daily: drops listener samples older than 35 days. */
  'audience.prune': { queue: 'default', payload: Type.Object({}) },
  /** Daily: deletes inbox messages and votes past their station's retention (src/domains/inbox/retention.ts). */
  'inbox.prune': { queue: 'default', payload: Type.Object({}) },
  /** One of the jobs sending a push notification; job id = `push.send.{notificationId}.{part}` (docs/push.md). */
  'push.send': {
    queue: 'push',
    payload: Type.Object({
      notificationId: Type.String({ format: 'uuid' }),
      stationId: Type.String({ minLength: 1 }),
      part: Type.Integer({ minimum: 0 }),
    }),
  },
  /** Expo receipts of a notification's tickets, PUSH_EXPO_RECEIPT_DELAY_SECONDS after sending; job id = `push.receipts.{id}`. */
  'push.receipts': {
    queue: 'push',
    payload: Type.Object({ notificationId: Type.String({ format: 'uuid' }), stationId: Type.String({ minLength: 1 }) }),
  },
  /** Every 5 s: fires due reminders, plans `reminders.fire` at the next minute's due instants (src/domains/reminders/fire.ts). */
  'reminders.tick': { queue: 'push', payload: Type.Object({}) },
  /** The reminders of a station due at `at`; job id = `reminders.fire.{stationId}.{epoch ms}`. */
  'reminders.fire': {
    queue: 'push',
    payload: Type.Object({ stationId: Type.String({ minLength: 1 }), at: Type.String({ format: 'date-time' }) }),
  },
  /** Every 5 minutes: removes notifications older than 30 days, ends those past their TTL. */
  'push.sweep': { queue: 'push', payload: Type.Object({}) },
} as const satisfies Record<string, { queue: QueueName; payload: TSchema; awaited?: true }>;

export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = Static<(typeof JOBS)[N]['payload']>;

/** Whether a request may wait for the job's result: the worker then reports it (src/lib/jobResults.ts). */
export const isAwaited = (name: JobName): boolean => 'awaited' in JOBS[name];

/** Validates a job's payload when a worker takes it. */
export function parsePayload<N extends JobName>(name: N, data: unknown): JobPayload<N> {
  return checkPayload<JobPayload<N>>(JOBS[name].payload, data, `payload of job ${name}`);
}

/** Typed producer side of the queues. */
export class Jobs {
  private readonly queues = new Map<QueueName, Queue>();
  /** One connection for every queue of the process (src/lib/queue.ts), made with the first queue. */
  private connection: Redis | null = null;
  private readonly target: RedisTarget;
  private readonly logger: Logger;
  private readonly results: JobResults;
  constructor(target: RedisTarget, logger: Logger, results: JobResults) {
    this.target = target;
    this.logger = logger;
    this.results = results;
  }

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      this.connection ??= createQueueConnection(this.target, this.logger);
      queue = createQueue(name, this.target, this.logger, this.connection).queue;
      this.queues.set(name, queue);
    }
    return queue;
  }

  /**
   * The BullMQ queues behind the job names, for the queue dashboard (src/http/queueDashboard.ts);
   * null when jobs do not run through BullMQ.
   */
  bullQueues(): Queue[] | null {
    return QUEUES.map((name) => this.queue(name));
  }

  /** Jobs per queue and state for metrics (`waveline_queue_jobs`); null when no queue keeps counts. */
  async counts(): Promise<Record<QueueName, Record<'waiting' | 'active' | 'delayed' | 'failed', number>> | null> {
    const entries = await Promise.all(
      QUEUES.map(async (name) => {
        const c = await this.queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized', 'waiting-children');
        return [
          name,
          {
            waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c['waiting-children'] ?? 0),
            active: c.active ?? 0,
            delayed: c.delayed ?? 0,
            failed: c.failed ?? 0,
          },
        ] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<QueueName, Record<'waiting' | 'active' | 'delayed' | 'failed', number>>;
  }

  async enqueue<N extends JobName>(name: N, payload: JobPayload<N>, options: JobsOptions = {}) {
    parsePayload(name, payload);
    try {
      return await this.queue(JOBS[name].queue).add(name, payload, options);
    } catch (err) {
      throw isRedisUnavailable(err) ? new RedisUnavailableError() : err;
    }
  }

  /** A repeatable job (BullMQ job scheduler) every `everyMs`; saving the same id again replaces its schedule. */
  async schedule<N extends JobName>(id: string, everyMs: number, name: N, payload: JobPayload<N>): Promise<void> {
    parsePayload(name, payload);
    await this.queue(JOBS[name].queue).upsertJobScheduler(id, { every: everyMs }, { name, data: payload });
  }

  async unschedule(id: string, name: JobName): Promise<void> {
    await this.queue(JOBS[name].queue).removeJobScheduler(id);
  }

  /**
   * Adds the job under `jobId` (a no-op when that job exists) and waits at most `timeoutMs` for the
   * worker's result: the job's return value, or undefined when it failed or did not finish in time.
   * Listening starts before the job is added. When the job may have finished before (a repeated id),
   * pass `finishedBefore`: it is asked once listening has begun and its value, if any, is the answer.
   */
  async run<N extends JobName>(
    name: N,
    payload: JobPayload<N>,
    jobId: string,
    timeoutMs: number,
    finishedBefore?: () => Promise<unknown>,
  ): Promise<unknown> {
    if (!isAwaited(name)) throw new Error(`${name} is not an awaited job`);
    await this.results.listen();
    const waiting = this.results.wait(jobId, timeoutMs);
    try {
      // The result travels on the results channel and the job's own effects are stored: a completed
      // awaited job is not kept (Redis does less per job; a repeated id later adds a job that finds the
      // work done — awaited handlers are idempotent).
      await this.enqueue(name, payload, { jobId, removeOnComplete: true });
      if (finishedBefore) {
        const earlier = await finishedBefore();
        if (earlier !== undefined) {
          waiting.cancel();
          return earlier;
        }
      }
    } catch (err) {
      this.logger.warn({ err, job: name }, 'could not enqueue');
      waiting.cancel();
      return undefined;
    }
    const outcome = await waiting.result;
    return outcome?.ok ? outcome.value : undefined;
  }

  async close(): Promise<void> {
    for (const queue of this.queues.values()) await queue.close();
    this.queues.clear();
    this.connection?.disconnect();
    this.connection = null;
  }
}
