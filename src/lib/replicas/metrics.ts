import { counter, gauge } from '../metrics.ts';

// The read replicas' metrics (docs/operations.md, "Metrics"; lib/replicas/routing.ts): listed in src/roles/metrics.ts.
// Counted per database read (a read cache miss, a feed's load), never per cached answer.

export const replicaLag = gauge({
  name: 'waveline_db_replica_lag_seconds',
  help: 'Seconds each Postgres read replica replays behind the primary at its last probe (-1 while it does not answer).',
  labelNames: ['replica'] as const,
});

export const dbReads = counter({
  name: 'waveline_db_reads_total',
  help: 'Listener database reads by where they ran (primary, replica) and why.',
  labelNames: ['target', 'reason'] as const,
});
