import type { Services } from '../../services.ts';
import { inTransaction } from '../../lib/db.ts';
import { keys } from '../../lib/keys.ts';
import type { JobName } from '../../jobs.ts';
import { refreshScheduleRowIn } from './feed.ts';
import { lockStation } from '../stations/lock.ts';
import { refreshOnAirIn } from './onair.ts';
import { boundariesBetween } from './queries.ts';
import { nextLocalMidnight } from './window.ts';

// Timing jobs of the schedule feed rows (BullMQ delayed jobs on the default queue):
// - schedule.midnight at each local midnight: rebuild both rows, then plan the next day's timers;
// - schedule.boundary at each broadcast start/end and planned rundown item boundary: rebuild both rows;
// - schedule.sweep hourly (a repeatable job): re-plans every station with a schedule row, healing a
//   lost job or a missed midnight.
// Job ids are deterministic (name, station, instant), so planning twice adds nothing. Handlers
// recompute from the database, and a row is written only when its data changed, so a job that runs
// twice or late sends no stale or duplicate frame.

type TimerJob = Extract<JobName, 'schedule.midnight' | 'schedule.boundary'>;

export const timerJobId = (name: TimerJob, stationId: string, at: Date): string => `${name}.${stationId}.${at.getTime()}`;

/** The instant a timer computes for: its planned instant, or now when it runs late. */
export const effectiveInstant = (plannedAt: string, now: Date): Date => new Date(Math.max(new Date(plannedAt).getTime(), now.getTime()));

const SWEEP_ID = 'schedule.sweep';
const sweepRegistered = new WeakSet<Services>();

async function ensureSweep(svc: Services): Promise<void> {
  if (sweepRegistered.has(svc)) return;
  await svc.jobs.queue('default').upsertJobScheduler(SWEEP_ID, { pattern: '7 * * * *' }, { name: 'schedule.sweep', data: {} });
  sweepRegistered.add(svc);
}

/**
 * Plans the station's timers from `from` through the end of the next local day: the next local
 * midnight and every boundary in (from, that horizon]. Timers no longer wanted (a broadcast moved or
 * was cancelled) are removed while still delayed.
 */
export async function planTimers(svc: Services, stationId: string, from: Date): Promise<void> {
  await ensureSweep(svc);
  // Under the station lock, so two re-plans of one station never interleave: the last to take the
  // lock reads the latest schedule and its view is what stays in the queue.
  await inTransaction(svc.db, async (tx) => {
    const station = await lockStation(tx, stationId);
    const wanted = new Map<string, { name: TimerJob; at: Date }>();
    if (station) {
      const midnight = nextLocalMidnight(from, station.timezone);
      const horizon = nextLocalMidnight(midnight, station.timezone);
      wanted.set(timerJobId('schedule.midnight', stationId, midnight), { name: 'schedule.midnight', at: midnight });
      for (const at of await boundariesBetween(tx.trx, stationId, from, horizon)) {
        wanted.set(timerJobId('schedule.boundary', stationId, at), { name: 'schedule.boundary', at });
      }
    }
    await replaceTimers(svc, stationId, wanted);
  });
}

async function replaceTimers(svc: Services, stationId: string, wanted: Map<string, { name: TimerJob; at: Date }>): Promise<void> {
  const setKey = keys.scheduleTimers(stationId);
  const queue = svc.jobs.queue('default');
  const stale = (await svc.redis.smembers(setKey)).filter((id) => !wanted.has(id));
  for (const id of stale) {
    const job = await queue.getJob(id);
    if (job && (await job.isDelayed())) await job.remove().catch(() => undefined);
  }
  if (stale.length) await svc.redis.srem(setKey, ...stale);
  const now = svc.clock.now().getTime();
  await Promise.all(
    [...wanted].map(([jobId, { name, at }]) =>
      svc.jobs.enqueue(name, { stationId, at: at.toISOString() }, { jobId, delay: Math.max(0, at.getTime() - now) }),
    ),
  );
  if (wanted.size) await svc.redis.sadd(setKey, ...wanted.keys());
}

/** Rebuilds the station's `schedule` and `on-air` rows as of `at`; true when either changed. */
export async function refreshScheduleFeed(svc: Services, stationId: string, at: Date): Promise<boolean> {
  return inTransaction(svc.db, async (tx) => {
    const station = await lockStation(tx, stationId);
    if (!station) return false;
    const now = svc.clock.now();
    const schedule = await refreshScheduleRowIn(tx, svc, stationId, station.timezone, at, now);
    const onAir = await refreshOnAirIn(tx, svc.bus, stationId, at, now, svc);
    return schedule || onAir;
  });
}

/** One tick as of `at` (tests inject the instant): rebuild both rows, then plan the timers after `at`. */
export async function runScheduleTick(svc: Services, stationId: string, at: Date): Promise<void> {
  await refreshScheduleFeed(svc, stationId, at);
  await planTimers(svc, stationId, at);
}

/**
 * Every station with a schedule gets a tick at `now` (the sweep). Every station has a schedule row from
 * its creation (stationRows.ts); one without any broadcast has nothing a timer could change (its rows
 * stay `broadcasts: []` and null until a schedule write, which plans its own timers), so it is skipped.
 */
export async function sweepSchedules(svc: Services, now: Date): Promise<number> {
  const stations = await svc
    .db('feed_rows as r')
    .where({ 'r.kind': 'schedule', 'r.deleted': false })
    .whereExists((broadcasts) => broadcasts.select(svc.db.raw('1')).from('broadcasts as b').whereRaw('b.station_id = r.station_id'))
    .distinct<Array<{ station_id: string }>>('r.station_id as station_id');
  for (const { station_id } of stations) await runScheduleTick(svc, station_id, now);
  return stations.length;
}
