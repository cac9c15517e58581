import type { EventEmitter } from 'node:events';
import type { Job, Queue, QueueEvents, JobsOptions } from 'bullmq';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { createQueue, createQueueEvents } from './lib/queue.ts';
import type { Logger } from './lib/logger.ts';
import type { Redis } from './lib/redis.ts';
import { validate } from './http/validate.ts';

// Job names, their queues and payload schemas: the only part of the job system the web role imports.
// Queues separate latency-sensitive work (ingest) from CPU-heavy work (media) so neither starves.

export const QUEUES = ['default', 'ingest', 'media'] as const;
export type QueueName = (typeof QUEUES)[number];

export const JOBS = {
  'health.ping': { queue: 'default', payload: Type.Object({ at: Type.String() }) },
  // Schedule timers (src/domains/schedule/timers.ts): `at` is the planned instant, ISO 8601 UTC.
  'schedule.midnight': { queue: 'default', payload: Type.Object({ stationId: Type.String({ minLength: 1 }), at: Type.String({ format: 'date-time' }) }) },
  'schedule.boundary': { queue: 'default', payload: Type.Object({ stationId: Type.String({ minLength: 1 }), at: Type.String({ format: 'date-time' }) }) },
  'schedule.sweep': { queue: 'default', payload: Type.Object({}) },
  /** Renders an uploaded image version's variants; job id = versionId (docs/media.md). */
  'media.variants': { queue: 'media', payload: Type.Object({ stationId: Type.String(), versionId: Type.String() }) },
  /** Re-presents records using a version a little after its variants were stored (docs/media.md). */
  'media.refresh': { queue: 'default', payload: Type.Object({ stationId: Type.String(), versionId: Type.String() }) },
  'feeds.poll': {
    queue: 'default',
    payload: Type.Object({ stationId: Type.String(), feed: Type.Union([Type.Literal('weather'), Type.Literal('traffic')]) }),
  },
  /** Rundown following of one stored observation; job id = observation id. */
  'nowPlaying.follow': { queue: 'ingest', payload: Type.Object({ observationId: Type.String({ format: 'uuid' }) }) },
  /** Third-party artwork lookup for one stored observation; job id = `artwork-{observation id}`. */
  'nowPlaying.artwork': { queue: 'default', payload: Type.Object({ observationId: Type.String({ format: 'uuid' }) }) },
} as const satisfies Record<string, { queue: QueueName; payload: TSchema }>;

export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = Static<(typeof JOBS)[N]['payload']>;

/** Validates a job's payload when a worker takes it. */
export function parsePayload<N extends JobName>(name: N, data: unknown): JobPayload<N> {
  return validate<JobPayload<N>>(JOBS[name].payload, 'body', data);
}

/** Typed producer side of the queues. */
export class Jobs {
  private readonly queues = new Map<QueueName, { queue: Queue; connection: Redis }>();
  private readonly events = new Map<QueueName, { events: QueueEvents; connection: Redis }>();
  private readonly redisUrl: string;
  private readonly logger: Logger;
  constructor(redisUrl: string, logger: Logger) {
    this.redisUrl = redisUrl;
    this.logger = logger;
  }

  queue(name: QueueName): Queue {
    let entry = this.queues.get(name);
    if (!entry) {
      entry = createQueue(name, this.redisUrl, this.logger);
      this.queues.set(name, entry);
    }
    return entry.queue;
  }

  async enqueue<N extends JobName>(name: N, payload: JobPayload<N>, options: JobsOptions = {}) {
    parsePayload(name, payload);
    return this.queue(JOBS[name].queue).add(name, payload, options);
  }

  /** A repeatable job (BullMQ job scheduler) every `everyMs`; saving the same id again replaces its schedule. */
  async schedule<N extends JobName>(id: string, everyMs: number, name: N, payload: JobPayload<N>): Promise<void> {
    parsePayload(name, payload);
    await this.queue(JOBS[name].queue).upsertJobScheduler(id, { every: everyMs }, { name, data: payload });
  }

  async unschedule(id: string, name: JobName): Promise<void> {
    await this.queue(JOBS[name].queue).removeJobScheduler(id);
  }

  private queueEvents(queue: QueueName): QueueEvents {
    let entry = this.events.get(queue);
    if (!entry) {
      entry = createQueueEvents(queue, this.redisUrl, this.logger);
      this.events.set(queue, entry);
    }
    return entry.events;
  }

  /**
   * Waits at most `timeoutMs` for a job to finish and returns its return value; `undefined` when it did
   * not finish in time or failed. One QueueEvents connection per queue and process serves every waiter.
   */
  async waitFor(job: Job, timeoutMs: number): Promise<unknown> {
    try {
      return await job.waitUntilFinished(this.queueEvents(JOBS[job.name as JobName].queue), Math.max(1, timeoutMs));
    } catch {
      return undefined;
    }
  }

  /**
   * Adds a job under a new, never used id and waits at most `timeoutMs` for its return value
   * (`undefined` on timeout or failure). Listening starts before the job is added, so unlike
   * `waitFor` no extra status check is needed; a repeated id must use `enqueue` + `waitFor`.
   */
  async runNew<N extends JobName>(name: N, payload: JobPayload<N>, jobId: string, timeoutMs: number): Promise<unknown> {
    const queueEvents = this.queueEvents(JOBS[name].queue);
    await queueEvents.waitUntilReady();
    // Per-job event names (`completed:{id}`) are emitted by QueueEvents but absent from its typings.
    const events = queueEvents as unknown as EventEmitter;
    return new Promise((resolve) => {
      const done = (value: unknown) => {
        clearTimeout(timer);
        events.off(`completed:${jobId}`, onCompleted);
        events.off(`failed:${jobId}`, onFailed);
        resolve(value);
      };
      const onCompleted = (args: { returnvalue: unknown }) => done(args.returnvalue);
      const onFailed = () => done(undefined);
      const timer = setTimeout(() => done(undefined), Math.max(1, timeoutMs));
      events.on(`completed:${jobId}`, onCompleted);
      events.on(`failed:${jobId}`, onFailed);
      this.enqueue(name, payload, { jobId }).catch((err: unknown) => {
        this.logger.warn({ err, job: name }, 'could not enqueue');
        done(undefined);
      });
    });
  }

  async close(): Promise<void> {
    for (const { events, connection } of this.events.values()) {
      await events.close();
      connection.disconnect();
    }
    this.events.clear();
    for (const { queue, connection } of this.queues.values()) {
      await queue.close();
      connection.disconnect();
    }
    this.queues.clear();
  }
}
