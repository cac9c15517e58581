import { counter, gauge, histogram } from '../src/lib/metrics.ts';

// The worker role's metrics (docs/operations.md, "Metrics"): jobs by name and outcome, stalled jobs and
// queue depths. Listed in src/roles/metrics.ts with every other role's.

export const jobsCompleted = counter({
  name: 'waveline_jobs_completed_total',
  help: 'Jobs that completed, by job name.',
  labelNames: ['job'] as const,
});

export const jobsFailed = counter({
  name: 'waveline_jobs_failed_total',
  help: 'Jobs that failed their last attempt (no retry left), by job name.',
  labelNames: ['job'] as const,
});

export const jobsRetried = counter({
  name: 'waveline_jobs_retried_total',
  help: 'Job attempts that failed and will be retried, by job name.',
  labelNames: ['job'] as const,
});

export const jobDuration = histogram({
  name: 'waveline_job_duration_seconds',
  help: 'Time a worker spent on one attempt of a job, by job name and outcome (completed or failed).',
  labelNames: ['job', 'outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
});

export const jobsStalled = counter({
  name: 'waveline_jobs_stalled_total',
  help: 'Jobs found stalled (their worker died or blocked past its lock) and taken back, by queue.',
  labelNames: ['queue'] as const,
});

/** Job counts of every queue by state, as the job system reports them; null when it keeps none. */
export type QueueCounts = Record<string, Record<'waiting' | 'active' | 'delayed' | 'failed', number>>;
let queueCountsSource: (() => Promise<QueueCounts | null>) | null = null;

/** The worker registers where queue depths come from (the Jobs abstraction); read at scrape time. */
export function setQueueCountsSource(source: (() => Promise<QueueCounts | null>) | null): void {
  queueCountsSource = source;
}

gauge({
  name: 'waveline_queue_jobs',
  help: 'Jobs in each queue by state (waiting, active, delayed, failed), read from the queues at scrape time.',
  labelNames: ['queue', 'state'] as const,
  async collect() {
    this.reset();
    const counts = queueCountsSource ? await queueCountsSource().catch(() => null) : null;
    if (!counts) return;
    for (const [queue, byState] of Object.entries(counts)) {
      for (const [state, value] of Object.entries(byState)) this.set({ queue, state }, value);
    }
  },
});
