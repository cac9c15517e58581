import type { Knex } from 'knex';
import type { Db } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import { endOfPlay, nextAtColumn, playBatches, type PlayInterval, type PlayKey } from '../nowPlaying/plays.ts';
import { audienceStreams, type AudienceStream } from './model.ts';

// Performances (docs/audience.md#how-performances-are-estimated): a play's figure on a stream is the largest sample of that
// stream within the play's audible interval there — start and end shifted by the stream's latency, the
// start widened by one poll interval (a listener counted at the poll just before the play started was
// most likely still there when it did). No sample → null, never 0. The play's figure is the sum over its
// streams, null when none has one. Figures are fixed (stored in play_performances) once the play has
// ended on its most delayed stream plus one poll interval, and recomputed when a pushed sample lands in
// a fixed play's interval.

export type ByStream = Record<string, number | null>;

export const totalOf = (byStream: ByStream): number | null => {
  let total: number | null = null;
  for (const n of Object.values(byStream)) if (n !== null) total = (total ?? 0) + n;
  return total;
};

/**
 * Per play, per stream: the largest sample in the audible interval (one statement for a whole batch of
 * plays); a play without a known end (still on air) is heard until now.
 */
export async function computePerformances(
  db: Db,
  stationId: string,
  streams: Array<Pick<AudienceStream, 'key' | 'latencySeconds'>>,
  plays: PlayInterval[],
  pollSeconds: number,
  now: Date,
): Promise<Map<string, ByStream>> {
  const result = new Map<string, ByStream>();
  for (const play of plays) result.set(play.id, Object.fromEntries(streams.map((s) => [s.key, null])));
  if (plays.length === 0 || streams.length === 0) return result;
  const run = (conn: Db) =>
    conn.raw<{ rows: Array<{ id: string; key: string; n: number | null }> }>(
      `SELECT p.id::text AS id, s.key, (
        SELECT max(ls.listeners) FROM listener_samples ls
         WHERE ls.station_id = ? AND ls.stream_key = s.key
           AND ls.at >= p.start_at + make_interval(secs => s.latency - ?)
           AND ls.at <= p.end_at + make_interval(secs => s.latency)) AS n
       FROM unnest(?::text[], ?::timestamptz[], ?::timestamptz[]) AS p(id, start_at, end_at)
       CROSS JOIN unnest(?::text[], ?::int[]) AS s(key, latency)`,
      [
        stationId,
        pollSeconds,
        plays.map((p) => p.id),
        plays.map((p) => p.start.toISOString()),
        plays.map((p) => (p.end ?? now).toISOString()),
        streams.map((s) => s.key),
        streams.map((s) => s.latencySeconds),
      ],
    );
  // The planner cannot tell how few samples each correlated range holds and prices a batch high enough to
  // JIT-compile it: compiling took 2 s of a 2.6 s batch, the scan itself 0.5 s (bench:audience). Off for the transaction.
  const { rows } = (db as Knex.Transaction).isTransaction
    ? await (async () => {
        await db.raw('SET LOCAL jit = off');
        return run(db);
      })()
    : await db.transaction(async (trx) => {
        await trx.raw('SET LOCAL jit = off');
        return run(trx);
      });
  for (const row of rows) result.get(row.id)![row.key] = row.n === null ? null : Number(row.n);
  return result;
}

const FIX_BATCH = 2000;
/** The job looks this far back before a station's latest fixed play (a play this long is rare; a longer one is fixed by the report). */
const FIX_LOOKBACK_MS = 6 * 3600_000;

interface UnfixedPlay extends PlayKey {
  id: string;
  duration_seconds: number | null;
  next_at: Date | null;
}

/**
 * Fixes one station's plays from `from` on (before `to`, when given) that have ended on the station's
 * most delayed stream plus one poll interval and have no figures yet: its plays without figures, in play
 * order (nowPlaying/plays.ts), each ending at the next observation's play time or its start + duration,
 * whichever is earlier (the play log's `endedAt`).
 */
export async function fixStation(
  db: Db,
  station: { id: string; streams: AudienceStream[] },
  range: { from: Date; to?: Date },
  pollSeconds: number,
  now: Date,
): Promise<number> {
  if (station.streams.length === 0) return 0;
  const settleMs = (pollSeconds + Math.max(...station.streams.map((s) => s.latencySeconds))) * 1000;
  let fixed = 0;
  const batches = playBatches<UnfixedPlay>(
    db,
    station.id,
    range,
    (query) =>
      query
        .leftJoin('play_performances as pp', 'pp.observation_id', 'o.id')
        .whereNull('pp.observation_id')
        .select('o.id', 'o.duration_seconds', nextAtColumn(db)),
    FIX_BATCH,
  );
  for await (const plays of batches) {
    const due: PlayInterval[] = [];
    for (const row of plays) {
      const end = endOfPlay(row.sort_at, row.duration_seconds, row.next_at === null ? null : new Date(row.next_at));
      if (end && end.getTime() + settleMs <= now.getTime()) due.push({ id: row.id, start: row.sort_at, end });
    }
    if (due.length) {
      const figures = await computePerformances(db, station.id, station.streams, due, pollSeconds, now);
      await storeFigures(db, station.id, due, figures, now);
      fixed += due.length;
    }
  }
  return fixed;
}

/**
 * Fixes what is due: of one station's range (the report, so a month's rows are all fixed before it is
 * written), or of every active station with streams from a little before its latest fixed play (the
 * `audience.fix` job, every poll interval; at most two days back). Returns how many plays were fixed.
 */
export async function fixDuePlays(
  svc: Pick<Services, 'db' | 'config' | 'clock'>,
  scope: { stationId?: string; from?: Date; to?: Date } = {},
): Promise<number> {
  const pollSeconds = svc.config.audience.pollSeconds;
  const now = svc.clock.now();
  const floor = scope.from ?? new Date(now.getTime() - 2 * 24 * 3600_000);
  const query = svc
    .db('stations as s')
    .whereRaw(
      // CASE, not AND: Postgres may evaluate either side of an AND first, and the length of a non-array fails.
      `CASE WHEN jsonb_typeof(s.profile->'streamUrls') = 'array' THEN jsonb_array_length(s.profile->'streamUrls') > 0 ELSE false END`,
    )
    .select<Array<{ id: string; streams: unknown; latest: Date | null }>>(
      's.id',
      svc.db.raw(`s.profile->'streamUrls' AS streams`),
      svc.db.raw('(SELECT max(pp.started_at) FROM play_performances pp WHERE pp.station_id = s.id) AS latest'),
    );
  if (scope.stationId) query.where('s.id', scope.stationId);
  else query.where('s.active', true);
  let fixed = 0;
  for (const row of await query) {
    const from = scope.from ?? new Date(Math.max(floor.getTime(), (row.latest?.getTime() ?? 0) - FIX_LOOKBACK_MS));
    fixed += await fixStation(svc.db, { id: row.id, streams: audienceStreams(row.streams) }, { from, to: scope.to }, pollSeconds, now);
  }
  return fixed;
}

async function storeFigures(db: Db, stationId: string, plays: PlayInterval[], figures: Map<string, ByStream>, now: Date): Promise<void> {
  if (plays.length === 0) return;
  await db.raw(
    `INSERT INTO play_performances (observation_id, station_id, started_at, ended_at, by_stream, performances, computed_at)
     SELECT f.id, ?, f.started_at, f.ended_at, f.by_stream, f.performances, ?
       FROM unnest(?::uuid[], ?::timestamptz[], ?::timestamptz[], ?::jsonb[], ?::int[]) AS f(id, started_at, ended_at, by_stream, performances)
     ON CONFLICT (observation_id) DO UPDATE SET by_stream = EXCLUDED.by_stream, performances = EXCLUDED.performances, computed_at = EXCLUDED.computed_at`,
    [
      stationId,
      now,
      plays.map((p) => p.id),
      plays.map((p) => p.start.toISOString()),
      plays.map((p) => p.end!.toISOString()),
      plays.map((p) => JSON.stringify(figures.get(p.id) ?? {})),
      // pg writes a null array element as NULL; knex's binding types know only non-null arrays.
      plays.map((p) => totalOf(figures.get(p.id) ?? {})) as unknown as number[],
    ],
  );
}

/**
 * A pushed batch landed: the fixed plays whose audible interval on a pushed sample's stream contains
 * that sample are computed again (in the caller's transaction, with every stream of the play).
 */
export async function recomputeTouched(
  db: Db,
  stationId: string,
  streams: AudienceStream[],
  samples: Array<{ streamKey: string; at: Date }>,
  pollSeconds: number,
  now: Date,
): Promise<number> {
  const latency = new Map(streams.map((s) => [s.key, s.latencySeconds * 1000]));
  // A sample at t on a stream with latency L lies in [start + L − poll, end + L]: start ≤ t − L + poll and end ≥ t − L.
  const lo = samples.map((s) => new Date(s.at.getTime() - (latency.get(s.streamKey) ?? 0)).toISOString());
  const hi = samples.map((s) => new Date(s.at.getTime() - (latency.get(s.streamKey) ?? 0) + pollSeconds * 1000).toISOString());
  const earliest = new Date(Math.min(...lo.map((t) => Date.parse(t))) - 24 * 3600_000);
  const latest = new Date(Math.max(...hi.map((t) => Date.parse(t))));
  // Plays are looked for on the (station, started_at) index; a play longer than a day is not searched for.
  const touched = await db('play_performances as pp')
    .where('pp.station_id', stationId)
    .andWhere('pp.started_at', '>=', earliest)
    .andWhere('pp.started_at', '<=', latest)
    .whereRaw(
      'EXISTS (SELECT 1 FROM unnest(?::timestamptz[], ?::timestamptz[]) AS w(lo, hi) WHERE pp.started_at <= w.hi AND pp.ended_at >= w.lo)',
      [lo, hi],
    )
    .select<Array<{ observation_id: string; started_at: Date; ended_at: Date }>>('observation_id', 'started_at', 'ended_at');
  if (touched.length === 0) return 0;
  const intervals = touched.map((t) => ({ id: t.observation_id, start: t.started_at, end: t.ended_at }));
  const figures = await computePerformances(db, stationId, streams, intervals, pollSeconds, now);
  await storeFigures(db, stationId, intervals, figures, now);
  return touched.length;
}
