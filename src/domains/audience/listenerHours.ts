import { DateTime } from 'luxon';
import type { Db } from '../../lib/db.ts';

// Listener-hours (decisions.md, "Audience"): each stream's samples integrated over time by the trapezoid
// rule; two neighbouring samples more than 3 poll intervals apart leave the time between them unknown
// (not 0). Samples count when their `at` lies in [from, to); a segment between two of them is split
// across bucket boundaries by linear interpolation. A bucket no segment reaches has null listener-hours,
// one without a sample a null peak; a partly covered bucket sums what is known.
// The station's peak in a bucket is the largest sum, at a sample instant, of every stream's latest count
// not older than 3 poll intervals (the poller samples a station's streams at the same instant).

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
  const last = new Map<string, { at: number; listeners: number }>();

  const addArea = (key: string, a: { at: number; listeners: number }, b: { at: number; listeners: number }) => {
    const cells = perStream.get(key)!;
    const slope = (b.listeners - a.listeners) / (b.at - a.at);
    let t0 = a.at;
    let i = bucketOf(starts, t0);
    while (t0 < b.at) {
      const t1 = Math.min(b.at, ends[i]);
      const l0 = a.listeners + slope * (t0 - a.at);
      const l1 = a.listeners + slope * (t1 - a.at);
      cells[i].hours = (cells[i].hours ?? 0) + ((l0 + l1) / 2) * ((t1 - t0) / 3_600_000);
      t0 = t1;
      i++;
    }
  };

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
      const prev = last.get(row.stream_key);
      if (prev && at - prev.at <= maxGapMs) addArea(row.stream_key, prev, sample);
      last.set(row.stream_key, sample);
      const cell = perStream.get(row.stream_key)![bucketOf(starts, at)];
      cell.peak = Math.max(cell.peak ?? 0, row.listeners);
    }
    if (rows.length < BATCH) break;
    const tail = rows[rows.length - 1];
    after = { at: tail.at, key: tail.stream_key };
  }
  closeInstant();

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
