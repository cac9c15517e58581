import { keys } from './keys.ts';
import type { Logger } from './logger.ts';
import type { Redis } from './redis.ts';

/** What a worker reports when a job that someone may be waiting on ends. */
export type JobOutcome = { ok: true; value: unknown } | { ok: false };

type Waiter = (outcome: JobOutcome) => void;

/**
 * Results of jobs a request waits on (rundown following), reported by the worker on one Redis pub/sub
 * channel and handed to the waiters of this process by job id.
 *
 * BullMQ's QueueEvents would do the same by reading the queue's whole event stream (every added,
 * waiting, active and completed event of every job) in every web process; this carries one small
 * message per finished job instead. A message can be lost (Redis reconnecting): a waiter then runs
 * into its deadline and the caller falls back to what is stored, so a lost message costs time, never
 * a wrong answer. The channel is subscribed on first use, so workers (which only report) never listen.
 */
export class JobResults {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly logger: Logger;
  private subscribed: Promise<void> | null = null;
  constructor(publisher: Redis, subscriber: Redis, logger: Logger) {
    this.publisher = publisher;
    this.subscriber = subscriber;
    this.logger = logger;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === keys.jobResultsChannel) this.hear(message);
    });
  }

  /** Tells every waiting process how job `jobId` ended. Never throws: the waiters have deadlines. */
  async report(jobId: string, outcome: JobOutcome): Promise<void> {
    try {
      await this.publisher.publish(keys.jobResultsChannel, JSON.stringify({ id: jobId, ...outcome }));
    } catch (err) {
      this.logger.warn({ err, jobId }, 'could not report a job result');
    }
  }

  /** Subscribes (once) so that waiting can begin; resolves when results are being heard. */
  listen(): Promise<void> {
    this.subscribed ??= this.subscribe().catch((err: unknown) => {
      this.subscribed = null;
      throw err;
    });
    return this.subscribed;
  }

  /**
   * The outcome of `jobId`, or undefined when none arrives within `timeoutMs`. Call `listen()` first
   * and register before the job can finish (before enqueueing it), or check for an earlier finish.
   */
  wait(jobId: string, timeoutMs: number): { result: Promise<JobOutcome | undefined>; cancel(): void } {
    let settle: (outcome: JobOutcome | undefined) => void = () => undefined;
    const result = new Promise<JobOutcome | undefined>((resolve) => {
      settle = resolve;
    });
    const set = this.waiters.get(jobId) ?? new Set<Waiter>();
    this.waiters.set(jobId, set);
    const done = (outcome: JobOutcome | undefined) => {
      clearTimeout(timer);
      set.delete(waiter);
      if (set.size === 0 && this.waiters.get(jobId) === set) this.waiters.delete(jobId);
      settle(outcome);
    };
    const waiter: Waiter = (outcome) => done(outcome);
    const timer = setTimeout(() => done(undefined), Math.max(1, timeoutMs));
    set.add(waiter);
    return { result, cancel: () => done(undefined) };
  }

  private async subscribe(): Promise<void> {
    await this.subscriber.subscribe(keys.jobResultsChannel);
  }

  private hear(message: string): void {
    let parsed: { id?: unknown; ok?: unknown; value?: unknown };
    try {
      parsed = JSON.parse(message) as typeof parsed;
    } catch {
      return;
    }
    if (typeof parsed.id !== 'string') return;
    const set = this.waiters.get(parsed.id);
    if (!set) return;
    const outcome: JobOutcome = parsed.ok === true ? { ok: true, value: parsed.value } : { ok: false };
    for (const waiter of [...set]) waiter(outcome);
  }
}
