import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CronExpressionParser } from 'cron-parser';

// The in-process job queue for the embedded default (REDIS_URL unset): the part of BullMQ's Queue and
// Worker that Waveline uses, with the same semantics — job ids deduplicate while a job is kept, delays,
// attempts with exponential or fixed backoff, retention of finished jobs, repeatable job schedulers
// (`every` ms or a cron `pattern`, parsed by cron-parser as BullMQ does). Every queue of the process
// lives in one registry, so a job added through one `Jobs` is taken by any worker of the process — as on
// Redis. Pending jobs and schedulers are written to a file a second after each change and on close
// (docs/embedded.md: what a crash loses); jobs that were running when the process stopped run again.

export type State = 'waiting' | 'delayed' | 'active' | 'completed' | 'failed';
type Retention = boolean | number | { age?: number; count?: number };

export interface LocalJobOptions {
  jobId?: string;
  delay?: number;
  attempts?: number;
  backoff?: number | { type: 'exponential' | 'fixed'; delay?: number };
  removeOnComplete?: Retention;
  removeOnFail?: Retention;
}

interface Scheduler {
  key: string;
  every?: number;
  pattern?: string;
  name: string;
  data: unknown;
  next: number;
  timer?: NodeJS.Timeout;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** A job as handlers and tests see it (the fields of BullMQ's Job that Waveline reads). */
export class LocalJob {
  readonly id: string;
  readonly name: string;
  readonly data: unknown;
  readonly opts: LocalJobOptions;
  timestamp: number;
  delay: number;
  attemptsMade = 0;
  state: State;
  returnvalue: unknown = null;
  failedReason: string | undefined;
  finishedOn: number | undefined;
  timer: NodeJS.Timeout | undefined;
  private readonly queue: QueueStore;

  constructor(queue: QueueStore, id: string, name: string, data: unknown, opts: LocalJobOptions, timestamp: number) {
    this.queue = queue;
    this.id = id;
    this.name = name;
    this.data = data;
    this.opts = opts;
    this.timestamp = timestamp;
    this.delay = Math.max(0, opts.delay ?? 0);
    this.state = this.delay > 0 ? 'delayed' : 'waiting';
  }

  async isDelayed(): Promise<boolean> {
    return this.state === 'delayed';
  }

  async getState(): Promise<State> {
    return this.state;
  }

  /** Removes a job that is not running (BullMQ refuses to remove a locked, active job). */
  async remove(): Promise<void> {
    if (this.state === 'active') throw new Error(`Job ${this.id} is active and cannot be removed`);
    this.queue.drop(this);
  }

  toJSON() {
    return {
      id: this.id,
      name: this.name,
      data: this.data,
      opts: this.opts,
      timestamp: this.timestamp,
      delay: this.delay,
      attemptsMade: this.attemptsMade,
      state: this.state,
    };
  }
}

/** One named queue of the process: its jobs, its schedulers and the workers taking from it. */
export class QueueStore {
  readonly name: string;
  readonly jobs = new Map<string, LocalJob>();
  readonly waiting: LocalJob[] = [];
  readonly schedulers = new Map<string, Scheduler>();
  /** Workers of the process taking from this queue, told when a job is waiting. */
  readonly workers = new Set<{ poke(): void }>();
  private nextId = 1;

  constructor(name: string) {
    this.name = name;
  }

  add(name: string, data: unknown, opts: LocalJobOptions, timestamp = Date.now()): LocalJob {
    const id = opts.jobId ?? String(this.nextId++);
    const existing = this.jobs.get(id);
    if (existing) return existing;
    const job = new LocalJob(this, id, name, data, opts, timestamp);
    this.jobs.set(id, job);
    if (job.state === 'delayed') this.arm(job, job.timestamp + job.delay);
    else this.enqueue(job);
    changed();
    return job;
  }

  private arm(job: LocalJob, due: number): void {
    clearTimeout(job.timer);
    job.state = 'delayed';
    const wait = due - Date.now();
    job.timer = setTimeout(
      () => (due - Date.now() > 0 ? this.arm(job, due) : this.promote(job)),
      Math.min(Math.max(0, wait), MAX_TIMER_MS),
    );
    job.timer.unref();
  }

  private promote(job: LocalJob): void {
    job.timer = undefined;
    if (this.jobs.get(job.id) !== job || job.state !== 'delayed') return;
    this.enqueue(job);
  }

  enqueue(job: LocalJob): void {
    job.state = 'waiting';
    this.waiting.push(job);
    for (const worker of this.workers) worker.poke();
  }

  /** The next waiting job for a worker, or undefined. */
  take(): LocalJob | undefined {
    const job = this.waiting.shift();
    if (job) job.state = 'active';
    return job;
  }

  finished(job: LocalJob, outcome: { ok: true; value: unknown } | { ok: false; err: Error }): 'retry' | 'done' {
    job.attemptsMade++;
    if (!outcome.ok) {
      const attempts = job.opts.attempts ?? 1;
      job.failedReason = outcome.err.message;
      if (job.attemptsMade < attempts) {
        const backoff = job.opts.backoff;
        const base = typeof backoff === 'number' ? backoff : (backoff?.delay ?? 0);
        const wait = typeof backoff === 'object' && backoff.type === 'exponential' ? base * 2 ** (job.attemptsMade - 1) : base;
        if (wait > 0) this.arm(job, Date.now() + wait);
        else this.enqueue(job);
        changed();
        return 'retry';
      }
    }
    job.state = outcome.ok ? 'completed' : 'failed';
    job.finishedOn = Date.now();
    if (outcome.ok) job.returnvalue = outcome.value;
    this.retain(job, outcome.ok ? job.opts.removeOnComplete : job.opts.removeOnFail);
    changed();
    return 'done';
  }

  /** BullMQ's retention: true removes at once, a number or {age, count} keeps that many / that long. */
  private retain(job: LocalJob, rule: Retention | undefined): void {
    if (rule === true) return this.drop(job);
    if (rule === undefined || rule === false) return;
    const count = typeof rule === 'number' ? rule : rule.count;
    const ageMs = typeof rule === 'object' && rule.age !== undefined ? rule.age * 1000 : undefined;
    const same = [...this.jobs.values()].filter((j) => j.state === job.state);
    const now = Date.now();
    const expired = same.filter(
      (j, i) => (ageMs !== undefined && now - (j.finishedOn ?? now) > ageMs) || (count !== undefined && i < same.length - count),
    );
    for (const j of expired) this.drop(j);
  }

  drop(job: LocalJob): void {
    if (this.jobs.get(job.id) !== job) return;
    clearTimeout(job.timer);
    this.jobs.delete(job.id);
    const at = this.waiting.indexOf(job);
    if (at >= 0) this.waiting.splice(at, 1);
    changed();
  }

  upsertScheduler(key: string, repeat: { every?: number; pattern?: string }, name: string, data: unknown): void {
    this.removeScheduler(key);
    if (!repeat.every && !repeat.pattern) throw new Error('a job scheduler needs `every` or `pattern`');
    const scheduler: Scheduler = { key, ...repeat, name, data, next: 0 };
    // As BullMQ: an `every` scheduler's first job is due at once, a pattern's at its next match.
    scheduler.next = repeat.every ? Date.now() : nextMatch(repeat.pattern!, Date.now());
    this.schedulers.set(key, scheduler);
    this.armScheduler(scheduler);
    changed();
  }

  private armScheduler(scheduler: Scheduler): void {
    clearTimeout(scheduler.timer);
    const wait = scheduler.next - Date.now();
    scheduler.timer = setTimeout(
      () => {
        if (this.schedulers.get(scheduler.key) !== scheduler) return;
        if (scheduler.next - Date.now() > 0) return this.armScheduler(scheduler);
        this.add(scheduler.name, scheduler.data, { ...DEFAULTS, jobId: `repeat:${scheduler.key}:${scheduler.next}` });
        scheduler.next = scheduler.every ? scheduler.next + scheduler.every : nextMatch(scheduler.pattern!, Date.now());
        if (scheduler.next <= Date.now()) scheduler.next = Date.now() + (scheduler.every ?? 1000);
        this.armScheduler(scheduler);
        changed();
      },
      Math.min(Math.max(0, wait), MAX_TIMER_MS),
    );
    scheduler.timer.unref();
  }

  removeScheduler(key: string): boolean {
    const scheduler = this.schedulers.get(key);
    if (!scheduler) return false;
    clearTimeout(scheduler.timer);
    this.schedulers.delete(key);
    changed();
    return true;
  }

  snapshot() {
    return {
      jobs: [...this.jobs.values()].filter((j) => j.state !== 'completed' && j.state !== 'failed').map((j) => j.toJSON()),
      schedulers: [...this.schedulers.values()].map(({ key, every, pattern, name, data, next }) => ({
        key,
        every,
        pattern,
        name,
        data,
        next,
      })),
    };
  }

  restore(saved: ReturnType<QueueStore['snapshot']>): void {
    for (const j of saved.jobs) {
      // A job that was running when the process stopped runs again (at-least-once, like a stalled job).
      const job = this.add(
        j.name,
        j.data,
        { ...j.opts, jobId: j.id, delay: j.state === 'delayed' ? Math.max(1, j.timestamp + j.delay - Date.now()) : 0 },
        j.timestamp,
      );
      job.delay = j.delay;
      job.attemptsMade = j.attemptsMade;
    }
    for (const s of saved.schedulers) {
      const scheduler: Scheduler = { ...s };
      this.schedulers.set(s.key, scheduler);
      this.armScheduler(scheduler);
    }
  }
}

const nextMatch = (pattern: string, after: number): number =>
  CronExpressionParser.parse(pattern, { currentDate: new Date(after) })
    .next()
    .getTime();

/** BullMQ's defaults for a job added by a scheduler are the queue's; ours are in lib/queue.ts. */
let DEFAULTS: LocalJobOptions = {};

export function setSchedulerDefaults(defaults: LocalJobOptions): void {
  DEFAULTS = defaults;
}

// ---- the process' queues and their file ----

const queues = new Map<string, QueueStore>();
let file: string | null = null;
let saveTimer: NodeJS.Timeout | null = null;

/** The process' queue of that name (created on first use). */
export function store(name: string): QueueStore {
  let queue = queues.get(name);
  if (!queue) {
    queue = new QueueStore(name);
    queues.set(name, queue);
  }
  return queue;
}

function changed(): void {
  if (!file || saveTimer) return;
  saveTimer = setTimeout(() => {
    saveTimer = null;
    saveLocalQueues();
  }, 1000);
  saveTimer.unref();
}

/** Writes the pending jobs and schedulers of every queue to the file (atomically: write, then rename). */
export function saveLocalQueues(): void {
  if (saveTimer) clearTimeout(saveTimer);
  saveTimer = null;
  if (!file) return;
  const body = Object.fromEntries([...queues].map(([name, queue]) => [name, queue.snapshot()]));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(body));
  renameSync(`${file}.tmp`, file);
}

/**
 * Keeps the process' queues in `path` (once per process): loads what a previous run left there and
 * saves a second after each change. `defaults` are the options of jobs added by schedulers.
 */
export function persistLocalQueues(path: string, defaults: LocalJobOptions): void {
  DEFAULTS = defaults;
  if (file) return;
  let saved: Record<string, ReturnType<QueueStore['snapshot']>> = {};
  try {
    saved = JSON.parse(readFileSync(path, 'utf8')) as typeof saved;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`could not read the embedded job queue ${path}: ${(err as Error).message}`);
  }
  for (const [name, queue] of Object.entries(saved)) store(name).restore(queue);
  file = path;
}
