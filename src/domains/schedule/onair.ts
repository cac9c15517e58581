import type { Knex } from 'knex';
import type { Services } from '../../services.ts';
import { inTransaction, type Tx } from '../../lib/db.ts';
import type { FeedBus } from '../../feed/bus.ts';
import { plannedEnds, type ResolvedBroadcast, type RundownItemRow } from './model.ts';
import { liveBroadcast, rundownOf } from './queries.ts';
import type { OnAir, UpNext } from './schemas.ts';
import { DEFAULT_UP_NEXT, type UpNextSetting } from '../stations/model.ts';
import { writeRowIfChanged } from './feed.ts';
import { lockStation } from '../stations/lock.ts';
import { onAirTransition, type ScheduleEventServices } from './webhookEvents.ts';

/** An observation that rundown following tied to a rundown item: which item, how sure, and its moment. */
export interface FollowedObservation {
  rundown_item_id: string;
  outcome: string;
  /** The observation's moment: observedAt, else its receipt (the `sort_at` column). */
  at: Date;
}

/** The newest observation of a broadcast that rundown following tied to an item, optionally of given outcomes. */
async function latestFollowed(
  db: Knex | Knex.Transaction,
  stationId: string,
  broadcast: { id: string; starts_at: Date },
  outcomes: string[],
  heardAt?: Date,
): Promise<FollowedObservation | null> {
  const query = db('observations')
    .where({ station_id: stationId, broadcast_id: broadcast.id })
    .whereNotNull('rundown_item_id')
    .whereIn('outcome', outcomes)
    // Lower bound on the indexed sort key: an observation followed against this broadcast was made during it.
    .andWhere('sort_at', '>=', new Date(broadcast.starts_at.getTime() - FOLLOWED_LOOKBACK_MS))
    // Only while the item is still in the rundown (observations keep the id of a deleted item).
    .whereExists((q) =>
      q
        .select(db.raw('1'))
        .from('rundown_items as ri')
        .whereRaw('ri.id = observations.rundown_item_id')
        .andWhere('ri.broadcast_id', broadcast.id),
    );
  // At a stream's heard time only what was played by then is known to its listeners.
  if (heardAt) query.andWhere('sort_at', '<=', heardAt);
  const row = await query
    .orderBy([
      { column: 'sort_at', order: 'desc' },
      { column: 'receipt_seq', order: 'desc' },
    ])
    .first<FollowedObservation | undefined>('rundown_item_id', 'outcome', 'sort_at as at')
    .options({ name: `onair_latest_followed_${outcomes.length}${heardAt ? '_heard' : ''}` });
  return row ?? null;
}

/** How far before its broadcast's start an observation followed against it may lie (the index bound above). */
export const FOLLOWED_LOOKBACK_MS = 3600_000;

/**
 * The planned item at `at` (the latest-starting one whose planned slot covers `at`), and the instant
 * the planned position last changed: that item's start, or in a gap the end of the item before it,
 * or the broadcast start.
 */
function plannedAt(items: RundownItemRow[], ends: Date[], broadcastStart: Date, at: Date): { index: number | null; since: Date } {
  let index: number | null = null;
  let gapStart = broadcastStart;
  items.forEach((item, i) => {
    if (item.planned_starts_at <= at && at < ends[i]) {
      if (index === null || item.planned_starts_at >= items[index].planned_starts_at) index = i;
    } else if (ends[i] <= at && ends[i] > gapStart) {
      gapStart = ends[i];
    }
  });
  return { index, since: index === null ? gapStart : items[index].planned_starts_at };
}

/** What the on-air row shows of a broadcast and its program. */
export interface LiveBroadcast {
  row: { id: string; title: string | null; starts_at: Date; ends_at: Date; nature: string };
  program: { id: string; title: string; profileId: string | null };
}

/** Ads and jingles are never announced as up next. */
const ANNOUNCED = (item: RundownItemRow): boolean => item.kind !== 'ad' && item.kind !== 'jingle';

/**
 * Up next (docs/now-playing.md#up-next): the next `count` items after the current
 * position `index`, ads and jingles skipped. Between planned items (no position) the items planned
 * after `at` follow.
 */
export function upNextAfter(items: RundownItemRow[], index: number | null, at: Date, count: number): UpNext {
  const following = index === null ? items.filter((item) => item.planned_starts_at > at) : items.slice(index + 1);
  return following
    .filter(ANNOUNCED)
    .slice(0, count)
    .map((item) => ({
      itemId: item.id,
      kind: item.kind,
      artist: item.artist,
      title: item.title,
      durationSeconds: item.duration_seconds,
      plannedStartsAt: item.planned_starts_at.toISOString(),
    }));
}

/** The first planned item boundary after `at`: the position (and so up next) may change then. */
export function nextPlannedBoundary(items: RundownItemRow[], broadcastEndsAt: Date, at: Date): number {
  const ends = plannedEnds(items, broadcastEndsAt);
  let next = Infinity;
  items.forEach((item, i) => {
    for (const instant of [item.planned_starts_at.getTime(), ends[i].getTime()])
      if (instant > at.getTime() && instant < next) next = instant;
  });
  return next;
}

/**
 * The `on-air` data at `at` (docs/schedule.md#feed-rows) for the broadcast live at `at`:
 * - followed: the newest observation of that broadcast matched or uncertainly matched to an item.
 * - position: the item of the newest `matched` observation when that observation is at least as recent
 *   as the moment the planned position last changed; otherwise the planned item at `at` (null in a gap).
 * - upNext: only when the station switched it on (`upNextAfter`); the key is absent otherwise.
 * Pure: the callers load the broadcast, its rundown, the two newest followed observations and the setting.
 */
export function buildOnAir(
  live: LiveBroadcast,
  items: RundownItemRow[],
  at: Date,
  followed: FollowedObservation | null,
  matched: FollowedObservation | null,
  upNext: UpNextSetting = DEFAULT_UP_NEXT,
): OnAir {
  const { row, program } = live;
  const ends = plannedEnds(items, row.ends_at);
  const planned = plannedAt(items, ends, row.starts_at, at);
  let index = planned.index;
  if (matched && matched.at >= planned.since) {
    const matchedIndex = items.findIndex((item) => item.id === matched.rundown_item_id);
    if (matchedIndex >= 0) index = matchedIndex;
  }
  const item = index === null ? null : items[index];
  return {
    broadcast: {
      id: row.id,
      title: row.title ?? program.title,
      startsAt: row.starts_at.toISOString(),
      endsAt: row.ends_at.toISOString(),
      nature: row.nature as NonNullable<OnAir>['broadcast']['nature'],
      program: { id: program.id, title: program.title, profileId: program.profileId },
    },
    position:
      item && index !== null
        ? {
            itemId: item.id,
            index: item.position,
            kind: item.kind,
            artist: item.artist,
            title: item.title,
            plannedStartsAt: item.planned_starts_at.toISOString(),
            plannedEndsAt: ends[index].toISOString(),
          }
        : null,
    followed:
      followed && items.length ? { itemId: followed.rundown_item_id, outcome: followed.outcome, at: followed.at.toISOString() } : null,
    ...(upNext.enabled ? { upNext: upNextAfter(items, index, at, upNext.count) } : {}),
  };
}

/** The station's up-next setting as stored (read with the on-air row's other inputs). */
async function upNextSetting(db: Knex | Knex.Transaction, stationId: string): Promise<UpNextSetting> {
  const row = await db('stations')
    .where({ id: stationId })
    .first<{ up_next: Partial<UpNextSetting> | null } | undefined>('up_next')
    .options({ name: 'onair_up_next_setting' });
  return { ...DEFAULT_UP_NEXT, ...row?.up_next };
}

/**
 * The on-air data of `current` (the broadcast live at `at`, loaded by the caller) and the next planned
 * boundary of its rundown. `heard`: `at` is a stream's heard time, so observations played after it are
 * not known yet.
 */
export async function onAirOf(
  db: Knex | Knex.Transaction,
  stationId: string,
  current: LiveBroadcast,
  at: Date,
  options: { upNext: UpNextSetting; heard?: boolean },
): Promise<{ onAir: NonNullable<OnAir>; nextBoundary: number }> {
  const items = await rundownOf(db, current.row.id);
  const heardAt = options.heard ? at : undefined;
  const followed = items.length ? await latestFollowed(db, stationId, current.row, ['matched', 'uncertain'], heardAt) : null;
  const matched =
    followed?.outcome === 'matched' ? followed : followed ? await latestFollowed(db, stationId, current.row, ['matched'], heardAt) : null;
  return {
    onAir: buildOnAir(current, items, at, followed, matched, options.upNext) as NonNullable<OnAir>,
    nextBoundary: nextPlannedBoundary(items, current.row.ends_at, at),
  };
}

/** The `on-air` data at `at`, or null when nothing is on air (see `buildOnAir`). */
export async function computeOnAir(db: Knex | Knex.Transaction, stationId: string, at: Date): Promise<OnAir> {
  const current = await liveBroadcast(db, stationId, at);
  if (!current) return null;
  return (await onAirOf(db, stationId, current, at, { upNext: await upNextSetting(db, stationId) })).onAir;
}

/**
 * Rebuilds the `on-air` row as of `at` inside a transaction that holds the station lock. With `events`,
 * a move to another broadcast emits `broadcast.ended` / `broadcast.started` after commit.
 */
export async function refreshOnAirIn(
  tx: Tx,
  bus: FeedBus,
  stationId: string,
  at: Date,
  now: Date,
  events?: ScheduleEventServices,
  removed?: ResolvedBroadcast | null,
): Promise<boolean> {
  const data = await computeOnAir(tx.trx, stationId, at);
  const onChange = events ? (previous: unknown) => onAirTransition(tx, events, stationId, previous as OnAir, data, at, removed) : undefined;
  return writeRowIfChanged(tx, bus, { stationId, kind: 'on-air', data, now }, onChange);
}

/** Rebuilds the on-air row as of `at` in its own transaction; false when unchanged (or the station is gone). */
export async function refreshOnAirAt(svc: Services, stationId: string, at: Date): Promise<boolean> {
  return inTransaction(svc.db, async (tx) => {
    if (!(await lockStation(tx, stationId))) return false;
    return refreshOnAirIn(tx, svc.bus, stationId, at, svc.clock.now(), svc);
  });
}

/**
 * Recomputes the station's `on-air` feed row (docs/schedule.md#feed-rows: broadcast, planned
 * position, last followed observation) and upserts it when it changed. Called by the schedule jobs at
 * broadcast and rundown-item boundaries, by schedule writes, and by rundown following after a match.
 */
export async function refreshOnAir(svc: Services, stationId: string): Promise<void> {
  await refreshOnAirAt(svc, stationId, svc.clock.now());
}
