import type { Db } from '../../lib/db.ts';
import { SAMPLE_RETENTION_DAYS, type Sample } from './model.ts';

// Storing listener samples and the poller's state. At 500 stations × 4 streams every 30 s the poller
// writes ≈ 67 samples a second: one multi-row statement per tick (unnest of arrays), never one per stream.

/** Stores samples; a sample for an existing (station, stream, at) replaces it (a pushed correction wins). */
export async function storeSamples(db: Db, samples: Sample[]): Promise<void> {
  if (samples.length === 0) return;
  await db.raw(
    `INSERT INTO listener_samples (station_id, stream_key, at, listeners, source)
     SELECT * FROM unnest(?::text[], ?::text[], ?::timestamptz[], ?::int[], ?::text[])
     ON CONFLICT (station_id, stream_key, at) DO UPDATE SET listeners = EXCLUDED.listeners, source = EXCLUDED.source`,
    [
      samples.map((s) => s.stationId),
      samples.map((s) => s.streamKey),
      samples.map((s) => s.at.toISOString()),
      samples.map((s) => s.listeners),
      samples.map((s) => s.source),
    ],
  );
}

export interface PollOutcome {
  stationId: string;
  streamKey: string;
  at: Date;
  /** null after a good poll; else why it stored nothing. */
  error: string | null;
}

/** Records each stream's last poll: a good one clears the error and the failure count, a failed one counts up. */
export async function recordPolls(db: Db, outcomes: PollOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await db.raw(
    `INSERT INTO stream_polls AS p (station_id, stream_key, last_polled_at, last_sample_at, last_error, failures)
     SELECT o.station_id, o.stream_key, o.at, CASE WHEN o.error IS NULL THEN o.at END, o.error, CASE WHEN o.error IS NULL THEN 0 ELSE 1 END
       FROM unnest(?::text[], ?::text[], ?::timestamptz[], ?::text[]) AS o(station_id, stream_key, at, error)
     ON CONFLICT (station_id, stream_key) DO UPDATE SET
       last_polled_at = EXCLUDED.last_polled_at,
       last_sample_at = COALESCE(EXCLUDED.last_sample_at, p.last_sample_at),
       last_error = EXCLUDED.last_error,
       failures = CASE WHEN EXCLUDED.last_error IS NULL THEN 0 ELSE p.failures + 1 END`,
    [
      outcomes.map((o) => o.stationId),
      outcomes.map((o) => o.streamKey),
      outcomes.map((o) => o.at.toISOString()),
      // pg writes a null array element as NULL; knex's binding types know only non-null arrays.
      outcomes.map((o) => o.error) as unknown as string[],
    ],
  );
}

/** A pushed sample also counts as the stream's latest good figure (it has no poll error to clear). */
export async function notePushedSamples(db: Db, stationId: string, latest: Map<string, Date>): Promise<void> {
  if (latest.size === 0) return;
  const keys = [...latest.keys()];
  await db.raw(
    `INSERT INTO stream_polls AS p (station_id, stream_key, last_sample_at)
     SELECT ?, k, at FROM unnest(?::text[], ?::timestamptz[]) AS l(k, at)
     ON CONFLICT (station_id, stream_key) DO UPDATE SET last_sample_at = GREATEST(p.last_sample_at, EXCLUDED.last_sample_at)`,
    [stationId, keys, keys.map((k) => latest.get(k)!.toISOString())],
  );
}

export interface PollState {
  streamKey: string;
  lastPolledAt: Date | null;
  lastSampleAt: Date | null;
  lastError: string | null;
  failures: number;
}

export async function pollStates(db: Db, stationIds: string[]): Promise<Map<string, PollState>> {
  const rows = await db('stream_polls').whereIn('station_id', stationIds).select<
    Array<{
      station_id: string;
      stream_key: string;
      last_polled_at: Date | null;
      last_sample_at: Date | null;
      last_error: string | null;
      failures: number;
    }>
  >('*');
  return new Map(
    rows.map((r) => [
      `${r.station_id}\u0000${r.stream_key}`,
      {
        streamKey: r.stream_key,
        lastPolledAt: r.last_polled_at,
        lastSampleAt: r.last_sample_at,
        lastError: r.last_error,
        failures: r.failures,
      },
    ]),
  );
}

export const pollStateKey = (stationId: string, streamKey: string): string => `${stationId}\u0000${streamKey}`;

/** Drops samples older than the retention (the worker's daily `audience.prune`); returns how many. */
export async function pruneSamples(db: Db, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - SAMPLE_RETENTION_DAYS * 24 * 3600_000);
  return db('listener_samples').where('at', '<', cutoff).delete();
}
