import type { Db } from '../../lib/db.ts';

/** The remindBeforeMinutes a follow may choose (schemas.ts REMIND_BEFORE_MINUTES). */
const REMIND_BEFORE = [0, 5, 10, 15, 30, 60];

// Which devices are due a reminder (docs/push.md#who-is-reminded-and-when): for each public broadcast
// (published, not cancelled) starting within the window, the devices following its program or one of
// its presenters (the broadcast's `presenterIds`, by default its program's), each at its earliest due
// time (startsAt − remindBeforeMinutes over its matching follows). Devices already reminded of the
// broadcast are left out by push, which sends a device at most one notification about a broadcast. The
// state is read when a reminder fires, so a moved, unpublished or removed broadcast needs no hook: it is
// simply found where it is now, or not at all.

/** Reminders are dropped this long after the broadcast started: nobody is reminded of a show half over. */
export const LATE_LIMIT_MS = 5 * 60_000;
/** The longest remindBeforeMinutes. */
export const MAX_BEFORE_MS = 60 * 60_000;

export interface DueFilter {
  /** Instant the due times are compared with (the worker's clock). */
  now: Date;
  /** Only reminders due at or before this instant. */
  until: Date;
  stationId?: string;
  broadcastId?: string;
}

/**
 * The CTE `due (broadcast_id, station_id, starts_at, token_hash, due_at)` of devices due at or before
 * `until` (reminded already or not), and its bindings.
 */
export function dueCte(filter: DueFilter): { sql: string; bindings: Array<string | Date> } {
  const bindings: Array<string | Date> = [new Date(filter.now.getTime() - LATE_LIMIT_MS), new Date(filter.until.getTime() + MAX_BEFORE_MS)];
  let where = '';
  if (filter.stationId !== undefined) {
    where += ' AND b.station_id = ?';
    bindings.push(filter.stationId);
  }
  if (filter.broadcastId !== undefined) {
    where += ' AND b.id = ?';
    bindings.push(filter.broadcastId);
  }
  bindings.push(filter.until);
  const sql = `
    b AS (
      SELECT b.id, b.station_id, b.program_id, b.starts_at,
             coalesce(b.presenter_ids, ARRAY(SELECT pp.presenter_id FROM program_presenters pp WHERE pp.program_id = b.program_id)) AS presenter_ids
        FROM broadcasts b
       WHERE b.published AND NOT b.cancelled AND b.starts_at > ? AND b.starts_at <= ?${where}
    ), matched AS (
      SELECT b.id AS broadcast_id, b.station_id, b.starts_at, f.token_hash, f.remind_before_minutes
        FROM b JOIN push_follows f ON f.program_id = b.program_id AND f.station_id = b.station_id
      UNION ALL
      SELECT b.id, b.station_id, b.starts_at, f.token_hash, f.remind_before_minutes
        FROM b JOIN push_follows f ON f.presenter_id = ANY(b.presenter_ids) AND f.station_id = b.station_id
    ), earliest AS (
      SELECT broadcast_id, station_id, starts_at, token_hash,
             min(starts_at - remind_before_minutes * interval '1 minute') AS due_at
        FROM matched GROUP BY broadcast_id, station_id, starts_at, token_hash
    ), due AS (
      SELECT e.* FROM earliest e WHERE e.due_at <= ?
    )`;
  return { sql, bindings };
}

export interface DueGroup {
  stationId: string;
  broadcastId: string;
  startsAt: Date;
  dueAt: Date;
}

/**
 * The (broadcast, due time) pairs not fired yet with a due time in (`from`, `until`]: for each public
 * broadcast in the window, each remindBeforeMinutes some follower of its program or presenters chose
 * (one index probe per value, whatever the number of followers). Earliest first.
 */
export async function dueGroups(db: Db, filter: DueFilter & { from?: Date }): Promise<DueGroup[]> {
  const bindings: Array<string | Date> = [new Date(filter.now.getTime() - LATE_LIMIT_MS), new Date(filter.until.getTime() + MAX_BEFORE_MS)];
  let where = '';
  if (filter.stationId !== undefined) {
    where = ' AND b.station_id = ?';
    bindings.push(filter.stationId);
  }
  bindings.push(filter.from ?? new Date(0), filter.until);
  const result = await db.raw<{ rows: Array<{ station_id: string; broadcast_id: string; starts_at: Date; due_at: Date }> }>(
    `WITH b AS (
       SELECT b.id, b.station_id, b.program_id, b.starts_at,
              coalesce(b.presenter_ids, ARRAY(SELECT pp.presenter_id FROM program_presenters pp WHERE pp.program_id = b.program_id)) AS presenter_ids
         FROM broadcasts b
        WHERE b.published AND NOT b.cancelled AND b.starts_at > ? AND b.starts_at <= ?${where}
     ), candidates AS (
       SELECT b.station_id, b.id AS broadcast_id, b.starts_at, b.starts_at - v.before * interval '1 minute' AS due_at
         FROM b CROSS JOIN unnest(ARRAY[${REMIND_BEFORE.join(', ')}]) AS v(before)
        WHERE EXISTS (SELECT 1 FROM push_follows f WHERE f.program_id = b.program_id AND f.remind_before_minutes = v.before)
           OR EXISTS (SELECT 1 FROM push_follows f WHERE f.presenter_id = ANY(b.presenter_ids) AND f.remind_before_minutes = v.before)
     )
     SELECT c.* FROM candidates c
      WHERE c.due_at > ? AND c.due_at <= ?
        AND NOT EXISTS (SELECT 1 FROM push_reminder_groups g WHERE g.broadcast_id = c.broadcast_id AND g.due_at = c.due_at)
      ORDER BY c.due_at, c.broadcast_id`,
    bindings,
  );
  return result.rows.map((r) => ({ stationId: r.station_id, broadcastId: r.broadcast_id, startsAt: r.starts_at, dueAt: r.due_at }));
}
