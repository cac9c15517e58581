import { EventEmitter } from 'node:events';
import { withoutCommitHook } from '../commitHooks.ts';
import { LocalJob, setSchedulerDefaults, store, type LocalJobOptions, type QueueStore, type State } from './queueStore.ts';

// The in-process job queue's producer and worker, shaped as the parts of BullMQ's Queue and Worker that
// Waveline uses (src/lib/queue.ts hands them out for an empty REDIS_URL). The queues themselves, their
// semantics and their file are in queueStore.ts.

export { LocalJob, persistLocalQueues, saveLocalQueues, type LocalJobOptions } from './queueStore.ts';

type Processor = (job: LocalJob) => Promise<unknown>;

/** The producer side of one queue (BullMQ's Queue, as far as Waveline uses it). */
export class LocalQueue extends EventEmitter {
  readonly name: string;
  private readonly defaults: LocalJobOptions;
  constructor(name: string, defaults: LocalJobOptions) {
    super();
    this.name = name;
    this.defaults = defaults;
    setSchedulerDefaults(defaults);
  }

  private get store(): QueueStore {
    return store(this.name);
  }

  async add(name: string, data: unknown, opts: LocalJobOptions = {}): Promise<LocalJob> {
    return this.store.add(name, data, { ...this.defaults, ...opts });
  }

  async getJob(id: string): Promise<LocalJob | undefined> {
    return this.store.jobs.get(id);
  }

  async remove(id: string): Promise<number> {
    const job = this.store.jobs.get(id);
    if (!job || job.state === 'active') return 0;
    this.store.drop(job);
    return 1;
  }

  async getJobs(states: State[] | State = ['waiting', 'delayed', 'active', 'completed', 'failed']): Promise<LocalJob[]> {
    const wanted = new Set(Array.isArray(states) ? states : [states]);
    return [...this.store.jobs.values()].filter((j) => wanted.has(j.state));
  }

  async getDelayed(start = 0, end = -1): Promise<LocalJob[]> {
    const delayed = (await this.getJobs(['delayed'])).sort((a, b) => a.timestamp + a.delay - (b.timestamp + b.delay));
    return delayed.slice(start, end < 0 ? undefined : end + 1);
  }

  async upsertJobScheduler(
    key: string,
    repeat: { every?: number; pattern?: string },
    template: { name: string; data: unknown },
  ): Promise<void> {
    this.store.upsertScheduler(key, repeat, template.name, template.data);
  }

  async removeJobScheduler(key: string): Promise<boolean> {
    return this.store.removeScheduler(key);
  }

  async getJobSchedulers(): Promise<Array<{ key: string; name: string; every?: number; pattern?: string; next: number }>> {
    return [...this.store.schedulers.values()].map(({ key, name, every, pattern, next }) => ({ key, name, every, pattern, next }));
  }

  async close(): Promise<void> {}
}

/** Runs a queue's jobs in this process with bounded concurrency (BullMQ's Worker, as far as used). */
export class LocalWorker extends EventEmitter {
  readonly name: string;
  private readonly processor: Processor;
  private readonly concurrency: number;
  private readonly running = new Set<Promise<void>>();
  private closing = false;

  constructor(name: string, processor: Processor, options: { concurrency?: number } = {}) {
    super();
    this.name = name;
    this.processor = processor;
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    store(name).workers.add(this);
    queueMicrotask(() => this.poke());
  }

  async waitUntilReady(): Promise<void> {}

  /** Starts waiting jobs while there is room. */
  poke(): void {
    const queue = store(this.name);
    while (!this.closing && this.running.size < this.concurrency) {
      const job = queue.take();
      if (!job) return;
      // A job a request enqueued runs outside that request's audit hook (lib/commitHooks.ts).
      const run: Promise<void> = withoutCommitHook(() => this.process(queue, job)).finally(() => {
        this.running.delete(run);
        this.poke();
      });
      this.running.add(run);
    }
  }

  private async process(queue: QueueStore, job: LocalJob): Promise<void> {
    let outcome: { ok: true; value: unknown } | { ok: false; err: Error };
    try {
      outcome = { ok: true, value: await this.processor(job) };
    } catch (err) {
      outcome = { ok: false, err: err instanceof Error ? err : new Error(String(err)) };
    }
    const next = queue.finished(job, outcome);
    if (outcome.ok) this.emit('completed', job, outcome.value);
    else this.emit('failed', job, outcome.err, next);
  }

  /** Stops taking jobs and waits for the running ones. */
  async close(): Promise<void> {
    this.closing = true;
    store(this.name).workers.delete(this);
    await Promise.all(this.running);
    this.emit('closed');
  }
}
