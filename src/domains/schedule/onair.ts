import type { Knex } from 'knex';
import type { Services } from '../../services.ts';
import { inTransaction, type Tx } from '../../lib/db.ts';
import type { FeedBus } from '../../feed/bus.ts';
import { plannedEnds, type ResolvedBroadcast, type RundownItemRow } from './model.ts';
import { liveBroadcast, rundownOf } from './queries.ts';
import type { OnAir } from './schemas.ts';
import { writeRowIfChanged } from './feed.ts';
import { lockStation } from '../stations/lock.ts';
import { onAirTransition, type ScheduleEventServices } from '../webhooks/scheduleEvents.ts';

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
): Promise<FollowedObservation | null> {
  const row = await db('observations')
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
    )
    .orderBy([
      { column: 'sort_at', order: 'desc' },
      { column: 'receipt_seq', order: 'desc' },
    ])
    .first<FollowedObservation | undefined>('rundown_item_id', 'outcome', 'sort_at as at')
    .options({ name: `onair_latest_followed_${outcomes.length}` });
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

/**
 * The `on-air` data at `at` (decisions.md, "Realtime feed") for the broadcast live at `at`:
 * - followed: the newest observation of that broadcast matched or uncertainly matched to an item.
 * - position: the item of the newest `matched` observation when that observation is at least as recent
 *   as the moment the planned position last changed; otherwise the planned item at `at` (null in a gap).
 * Pure: the callers load the broadcast, its rundown and the two newest followed observations.
 */
export function buildOnAir(
  live: LiveBroadcast,
  items: RundownItemRow[],
  at: Date,
  followed: FollowedObservation | null,
  matched: FollowedObservation | null,
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
  };
}

/** The `on-air` data at `at`, or null when nothing is on air (see `buildOnAir`). */
export async function computeOnAir(db: Knex | Knex.Transaction, stationId: string, at: Date): Promise<OnAir> {
  const current = await liveBroadcast(db, stationId, at);
  if (!current) return null;
  const items = await rundownOf(db, current.row.id);
  const followed = items.length ? await latestFollowed(db, stationId, current.row, ['matched', 'uncertain']) : null;
  const matched =
    followed?.outcome === 'matched' ? followed : followed ? await latestFollowed(db, stationId, current.row, ['matched']) : null;
  return buildOnAir(current, items, at, followed, matched);
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
 * Recomputes the station's `on-air` feed row (decisions.md, "Realtime feed": broadcast, planned
 * position, last followed observation) and upserts it when it changed. Called by the schedule jobs at
 * broadcast and rundown-item boundaries, by schedule writes, and by rundown following after a match.
 */
export async function refreshOnAir(svc: Services, stationId: string): Promise<void> {
  await refreshOnAirAt(svc, stationId, svc.clock.now());
}
