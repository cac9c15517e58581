import { DateTime } from 'luxon';
import type { Db } from '../../lib/db.ts';

// Listener-hours (docs/audience.md, "Listener-hours"): each stream's samples integrated over time by the
// trapezoid rule over [from, to); two neighbouring samples more than 3 poll intervals apart leave the time
// between them unknown (not 0). A segment counts for its part inside the window, interpolated, even when
// one of its samples lies outside it — so the last sample before `from` and the first at or after `to`
// of each stream are read too — and it is split across bucket boundaries the same way. A bucket no
// segment reaches has null listener-hours, one without a sample a null peak; a partly covered bucket sums
// what is known. Peaks count only the samples whose `at` lies in [from, to): the station's peak in a
// bucket is the largest sum, at a sample instant, of every stream's latest count not older than 3 poll
// intervals (the poller samples a station's streams at the same instant).

export interface Figures {
  listenerHours: number | null;
  peak: number | null;
}

export interface Bucket extends Figures {
  at: string;
  streams: Record<string, Figures>;
}

const BATCH = 10_000;

/** Bucket starts in the station's time zone covering [from, to); hours and days are local. */
export function bucketStarts(from: Date, to: Date, interval: 'hour' | 'day', timezone: string): number[] {
  const starts: number[] = [];
  let cursor = DateTime.fromJSDate(from, { zone: timezone }).startOf(interval);
  while (cursor.toMillis() < to.getTime()) {
    starts.push(cursor.toMillis());
    cursor = cursor.plus(interval === 'hour' ? { hours: 1 } : { days: 1 });
  }
  return starts;
}

function bucketOf(starts: number[], t: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export async function listenerHours(
  db: Db,
  options: {
    stationId: string;
    timezone: string;
    streamKeys: string[];
    from: Date;
    to: Date;
    interval: 'hour' | 'day';
    pollSeconds: number;
  },
): Promise<{ series: Bucket[]; total: Figures }> {
  const { streamKeys, from, to, pollSeconds } = options;
  const starts = bucketStarts(from, to, options.interval, options.timezone);
  const ends = [...starts.slice(1), to.getTime()];
  const perStream = new Map(streamKeys.map((k) => [k, starts.map(() => ({ hours: null as number | null, peak: null as number | null }))]));
  const totalPeak: Array<number | null> = starts.map(() => null);
  const maxGapMs = 3 * pollSeconds * 1000;
  const fromMs = from.getTime();
  const toMs = to.getTime();
  /** Each stream's latest count at a sample instant inside the window (peaks). */
  const last = new Map<string, { at: number; listeners: number }>();
  /** Each stream's previous sample, the one before `from` included (areas). */
  const previous = new Map<string, { at: number; listeners: number }>();

  /** The segment a → b's area inside [from, to), by bucket. */
  const addArea = (key: string, a: { at: number; listeners: number }, b: { at: number; listeners: number }) => {
    const cells = perStream.get(key)!;
    const slope = (b.listeners - a.listeners) / (b.at - a.at);
    let t0 = Math.max(a.at, fromMs);
    const end = Math.min(b.at, toMs);
    let i = bucketOf(starts, t0);
    while (t0 < end) {
      const t1 = Math.min(end, ends[i]);
      const l0 = a.listeners + slope * (t0 - a.at);
      const l1 = a.listeners + slope * (t1 - a.at);
      cells[i].hours = (cells[i].hours ?? 0) + ((l0 + l1) / 2) * ((t1 - t0) / 3_600_000);
      t0 = t1;
      i++;
    }
  };

  const segment = (key: string, sample: { at: number; listeners: number }) => {
    const prev = previous.get(key);
    if (prev && sample.at - prev.at <= maxGapMs) addArea(key, prev, sample);
    previous.set(key, sample);
  };
  const [before, beyond] = await edgeSamples(db, options.stationId, streamKeys, from, to, maxGapMs);
  for (const row of before) previous.set(row.stream_key, { at: row.at.getTime(), listeners: row.listeners });

  let after: { at: Date; key: string } | null = null;
  let instant = -1;
  const closeInstant = () => {
    if (instant < 0) return;
    let sum = 0;
    for (const s of last.values()) if (instant - s.at <= maxGapMs) sum += s.listeners;
    const i = bucketOf(starts, instant);
    totalPeak[i] = Math.max(totalPeak[i] ?? 0, sum);
  };
  for (;;) {
    const query = db('listener_samples')
      .where('station_id', options.stationId)
      .whereIn('stream_key', streamKeys)
      .andWhere('at', '>=', from)
      .andWhere('at', '<', to)
      .orderBy([{ column: 'at' }, { column: 'stream_key' }])
      .limit(BATCH)
      .select<Array<{ stream_key: string; at: Date; listeners: number }>>('stream_key', 'at', 'listeners');
    if (after) query.andWhereRaw('(at, stream_key) > (?::timestamptz, ?)', [after.at, after.key]);
    const rows = await query;
    for (const row of rows) {
      const at = row.at.getTime();
      if (at !== instant) {
        closeInstant();
        instant = at;
      }
      const sample = { at, listeners: row.listeners };
      segment(row.stream_key, sample);
      last.set(row.stream_key, sample);
      const cell = perStream.get(row.stream_key)![bucketOf(starts, at)];
      cell.peak = Math.max(cell.peak ?? 0, row.listeners);
    }
    if (rows.length < BATCH) break;
    const tail = rows[rows.length - 1];
    after = { at: tail.at, key: tail.stream_key };
  }
  closeInstant();
  for (const row of beyond) segment(row.stream_key, { at: row.at.getTime(), listeners: row.listeners });

  const round = (n: number) => Math.round(n * 1000) / 1000;
  let totalHours: number | null = null;
  let overallPeak: number | null = null;
  const series = starts.map((start, i) => {
    const streams: Record<string, Figures> = {};
    let hours: number | null = null;
    for (const key of streamKeys) {
      const cell = perStream.get(key)![i];
      streams[key] = { listenerHours: cell.hours === null ? null : round(cell.hours), peak: cell.peak };
      if (cell.hours !== null) hours = (hours ?? 0) + cell.hours;
    }
    if (hours !== null) totalHours = (totalHours ?? 0) + hours;
    if (totalPeak[i] !== null) overallPeak = Math.max(overallPeak ?? 0, totalPeak[i]!);
    return { at: new Date(start).toISOString(), listenerHours: hours === null ? null : round(hours), peak: totalPeak[i], streams };
  });
  return { series, total: { listenerHours: totalHours === null ? null : round(totalHours), peak: overallPeak } };
}

type SampleRow = { stream_key: string; at: Date; listeners: number };

/**
 * Per stream, its last sample before `from` and its first at or after `to`, each within `maxGapMs` of the
 * window (a farther one could only close a gap, which counts as unknown).
 */
async function edgeSamples(
  db: Db,
  stationId: string,
  streamKeys: string[],
  from: Date,
  to: Date,
  maxGapMs: number,
): Promise<[SampleRow[], SampleRow[]]> {
  if (streamKeys.length === 0) return [[], []];
  const side = (lo: Date, hi: Date, hiInclusive: boolean, order: 'asc' | 'desc') =>
    db('listener_samples')
      .distinctOn('stream_key')
      .where('station_id', stationId)
      .whereIn('stream_key', streamKeys)
      .andWhere('at', '>=', lo)
      .andWhere('at', hiInclusive ? '<=' : '<', hi)
      .orderBy([{ column: 'stream_key' }, { column: 'at', order }])
      .select<SampleRow[]>('stream_key', 'at', 'listeners');
  return Promise.all([
    side(new Date(from.getTime() - maxGapMs), from, false, 'desc'),
    side(to, new Date(to.getTime() + maxGapMs), true, 'asc'),
  ]);
}
