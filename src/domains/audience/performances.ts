import type { Db } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import { audienceStreams, type AudienceStream } from './model.ts';

// Performances (decisions.md, "Audience"): a play's figure on a stream is the largest sample of that
// stream within the play's audible interval there — start and end shifted by the stream's latency, the
// start widened by one poll interval (a listener counted at the poll just before the play started was
// most likely still there when it did). No sample → null, never 0. The play's figure is the sum over its
// streams, null when none has one. Figures are fixed (stored in play_performances) once the play has
// ended on its most delayed stream plus one poll interval, and recomputed when a pushed sample lands in
// a fixed play's interval.

export type ByStream = Record<string, number | null>;

export interface PlayInterval {
  id: string;
  start: Date;
  /** null while the play has no known end (still on air): the interval then runs to now. */
  end: Date | null;
}

/**
 * The end of a play in SQL (the play log's `endedAt`): the next observation's play time or
 * `playedAt + durationSeconds`, whichever is earlier; null when neither is known. `o` is the play.
 */
export const PLAY_END_SQL = `LEAST(
  (SELECT n.sort_at FROM observations n WHERE n.station_id = o.station_id
     AND (n.sort_at, n.receipt_seq) > (o.sort_at, o.receipt_seq) ORDER BY n.sort_at, n.receipt_seq LIMIT 1),
  o.sort_at + o.duration_seconds * interval '1 second')`;

export const totalOf = (byStream: ByStream): number | null => {
  let total: number | null = null;
  for (const n of Object.values(byStream)) if (n !== null) total = (total ?? 0) + n;
  return total;
};

/** Per play, per stream: the largest sample in the audible interval (one statement for a whole batch of plays). */
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
  const { rows } = await db.raw<{ rows: Array<{ id: string; key: string; n: number | null }> }>(
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
  for (const row of rows) result.get(row.id)![row.key] = row.n === null ? null : Number(row.n);
  return result;
}

interface DuePlay {
  id: string;
  station_id: string;
  start_at: Date;
  end_at: Date;
  streams: unknown;
}

const FIX_BATCH = 2000;

/**
 * Fixes the figures of every play that has ended on its most delayed stream plus one poll interval and
 * has none yet: plays of the last two days (the `audience.fix` job), or of one station's range (the
 * report, so a month's rows are all fixed before it is written). Returns how many were fixed.
 */
export async function fixDuePlays(
  svc: Pick<Services, 'db' | 'config' | 'clock'>,
  scope: { stationId?: string; from?: Date; to?: Date } = {},
): Promise<number> {
  const pollSeconds = svc.config.audience.pollSeconds;
  const now = svc.clock.now();
  const from = scope.from ?? new Date(now.getTime() - 2 * 24 * 3600_000);
  let fixed = 0;
  for (;;) {
    const query = svc.db('observations as o')
      .join('stations as s', 's.id', 'o.station_id')
      .crossJoin(svc.db.raw(`LATERAL (SELECT ${PLAY_END_SQL} AS end_at) e`))
      .whereNotNull('o.title')
      .andWhere('o.sort_at', '>=', from)
      .whereRaw(`jsonb_typeof(s.profile->'streamUrls') = 'array' AND jsonb_array_length(s.profile->'streamUrls') > 0`)
      .whereRaw('NOT EXISTS (SELECT 1 FROM play_performances pp WHERE pp.observation_id = o.id)')
      .whereNotNull('e.end_at')
      .whereRaw(
        `e.end_at + make_interval(secs => ? + (SELECT coalesce(max((x->>'latencySeconds')::int), 0)
           FROM jsonb_array_elements(s.profile->'streamUrls') x)) <= ?`,
        [pollSeconds, now],
      )
      .orderBy([{ column: 'o.station_id' }, { column: 'o.sort_at' }])
      .limit(FIX_BATCH)
      .select<DuePlay[]>('o.id', 'o.station_id', 'o.sort_at as start_at', 'e.end_at', svc.db.raw(`s.profile->'streamUrls' AS streams`));
    if (scope.stationId) query.andWhere('o.station_id', scope.stationId);
    if (scope.to) query.andWhere('o.sort_at', '<', scope.to);
    const due = await query;
    const byStation = new Map<string, DuePlay[]>();
    for (const play of due) byStation.set(play.station_id, [...(byStation.get(play.station_id) ?? []), play]);
    for (const [stationId, plays] of byStation) {
      const streams = audienceStreams(plays[0].streams);
      const intervals = plays.map((p) => ({ id: p.id, start: p.start_at, end: p.end_at }));
      const figures = await computePerformances(svc.db, stationId, streams, intervals, pollSeconds, now);
      await storeFigures(svc.db, stationId, intervals, figures, now);
    }
    fixed += due.length;
    if (due.length < FIX_BATCH) return fixed;
  }
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
    .whereRaw('EXISTS (SELECT 1 FROM unnest(?::timestamptz[], ?::timestamptz[]) AS w(lo, hi) WHERE pp.started_at <= w.hi AND pp.ended_at >= w.lo)', [lo, hi])
    .select<Array<{ observation_id: string; started_at: Date; ended_at: Date }>>('observation_id', 'started_at', 'ended_at');
  if (touched.length === 0) return 0;
  const intervals = touched.map((t) => ({ id: t.observation_id, start: t.started_at, end: t.ended_at }));
  const figures = await computePerformances(db, stationId, streams, intervals, pollSeconds, now);
  await storeFigures(db, stationId, intervals, figures, now);
  return touched.length;
}
