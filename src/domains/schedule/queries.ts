import type { Knex } from 'knex';
import {
  MAX_BROADCAST_MS,
  type BroadcastRow,
  type PresenterRef,
  type ProgramRow,
  type ResolvedBroadcast,
  type RundownItemRow,
  type SlotRow,
} from './model.ts';

// Read side of the schedule. Every function takes a knex instance or transaction, so listener
// routes, GraphQL, feed rebuilds and admin commands share them.

type Q = Knex | Knex.Transaction;

interface JoinedRow extends BroadcastRow {
  program_title: string;
  program_profile_id: string | null;
  program_updated_at: Date;
  program_image_version_id: string | null;
}

/** Program presenters (in the program's order) for a set of programs. */
async function programPresenters(db: Q, programIds: string[]): Promise<Map<string, PresenterRef[]>> {
  const out = new Map<string, PresenterRef[]>();
  if (programIds.length === 0) return out;
  const rows = await db('program_presenters as pp')
    .join('presenters as p', 'p.id', 'pp.presenter_id')
    .whereIn('pp.program_id', programIds)
    .orderBy([{ column: 'pp.program_id' }, { column: 'pp.position' }])
    .select<Array<{ program_id: string; id: string; title: string; image_version_id: string | null; updated_at: Date }>>(
      'pp.program_id',
      'p.id',
      'p.title',
      'p.image_version_id',
      'p.updated_at',
    );
  for (const row of rows) {
    const list = out.get(row.program_id) ?? [];
    list.push({ id: row.id, title: row.title, imageVersionId: row.image_version_id, updatedAt: row.updated_at });
    out.set(row.program_id, list);
  }
  return out;
}

async function presentersById(db: Q, ids: string[]): Promise<Map<string, PresenterRef>> {
  const out = new Map<string, PresenterRef>();
  if (ids.length === 0) return out;
  const rows = await db<{ id: string; title: string; image_version_id: string | null; updated_at: Date }>('presenters')
    .whereIn('id', ids)
    .select('id', 'title', 'image_version_id', 'updated_at');
  for (const row of rows)
    out.set(row.id, { id: row.id, title: row.title, imageVersionId: row.image_version_id, updatedAt: row.updated_at });
  return out;
}

/** Attaches program and presenters (the broadcast's own list when set, else the program's). */
async function resolve(db: Q, rows: JoinedRow[]): Promise<ResolvedBroadcast[]> {
  const byProgram = await programPresenters(db, [...new Set(rows.filter((r) => r.presenter_ids === null).map((r) => r.program_id))]);
  const overrides = await presentersById(db, [...new Set(rows.flatMap((r) => r.presenter_ids ?? []))]);
  return rows.map((row) => {
    const presenters =
      row.presenter_ids === null
        ? (byProgram.get(row.program_id) ?? [])
        : row.presenter_ids.map((id) => overrides.get(id)).filter((p): p is PresenterRef => p !== undefined);
    return { ...splitJoined(row), presenters };
  });
}

/** A joined row as the broadcast row and what listeners see of its program. */
function splitJoined(row: JoinedRow): Omit<ResolvedBroadcast, 'presenters'> {
  const { program_title, program_profile_id, program_updated_at, program_image_version_id, ...broadcast } = row;
  return {
    row: broadcast,
    program: {
      id: row.program_id,
      title: program_title,
      profileId: program_profile_id,
      imageVersionId: program_image_version_id,
      updatedAt: program_updated_at,
    },
  };
}

function joined(db: Q, stationId: string) {
  return db('broadcasts as b')
    .join('programs as pr', 'pr.id', 'b.program_id')
    .where('b.station_id', stationId)
    .select<JoinedRow[]>(
      'b.*',
      'pr.title as program_title',
      'pr.profile_id as program_profile_id',
      'pr.updated_at as program_updated_at',
      'pr.image_version_id as program_image_version_id',
    );
}

/**
 * Published broadcasts overlapping [start, end), by start time, at most `limit` (+1 read to tell
 * whether more exist). Cancelled ones are included: listeners see them as `cancelled`.
 */
export async function broadcastsOverlapping(
  db: Q,
  stationId: string,
  start: Date,
  end: Date,
  limit: number,
): Promise<{ broadcasts: ResolvedBroadcast[]; truncated: boolean }> {
  const rows = await joined(db, stationId)
    .andWhere('b.published', true)
    .andWhere('b.starts_at', '<', end)
    .andWhere('b.starts_at', '>', new Date(start.getTime() - MAX_BROADCAST_MS))
    .andWhere('b.ends_at', '>', start)
    .orderBy([{ column: 'b.starts_at' }, { column: 'b.id' }])
    .limit(limit + 1);
  const truncated = rows.length > limit;
  return { broadcasts: await resolve(db, truncated ? rows.slice(0, limit) : rows), truncated };
}

/**
 * The joined row of the broadcast on air at `at`: published, not cancelled, startsAt <= at < endsAt.
 * When broadcasts overlap, the one that started last is on air (it interrupts the earlier one).
 * A named (prepared) statement: the on-air row is rebuilt after every matched observation.
 */
async function onAirRow(db: Q, stationId: string, at: Date): Promise<JoinedRow[]> {
  return joined(db, stationId)
    .andWhere('b.published', true)
    .andWhere('b.cancelled', false)
    .andWhere('b.starts_at', '<=', at)
    .andWhere('b.starts_at', '>', new Date(at.getTime() - MAX_BROADCAST_MS))
    .andWhere('b.ends_at', '>', at)
    .orderBy([
      { column: 'b.starts_at', order: 'desc' },
      { column: 'b.id', order: 'desc' },
    ])
    .limit(1)
    .options({ name: 'schedule_live_broadcast' });
}

/** A broadcast of the station with its program and presenters, published or not, wherever it lies now. */
export async function broadcastById(db: Q, stationId: string, id: string): Promise<ResolvedBroadcast | null> {
  const [resolved] = await resolve(db, await joined(db, stationId).andWhere('b.id', id));
  return resolved ?? null;
}

/** The broadcast on air at `at` with its program and presenters. */
export async function broadcastOnAir(db: Q, stationId: string, at: Date): Promise<ResolvedBroadcast | null> {
  const [resolved] = await resolve(db, await onAirRow(db, stationId, at));
  return resolved ?? null;
}

/** The broadcast on air at `at` with its program, without presenters (the on-air feed row needs none). */
export async function liveBroadcast(db: Q, stationId: string, at: Date): Promise<Omit<ResolvedBroadcast, 'presenters'> | null> {
  const [row] = await onAirRow(db, stationId, at);
  return row ? splitJoined(row) : null;
}

export interface ProgramWithDetails {
  program: ProgramRow;
  presenters: PresenterRef[];
  slots: SlotRow[];
}

async function details(db: Q, programs: ProgramRow[]): Promise<ProgramWithDetails[]> {
  const ids = programs.map((p) => p.id);
  const presenters = await programPresenters(db, ids);
  const slots = ids.length
    ? await db<SlotRow>('program_slots')
        .whereIn('program_id', ids)
        .orderBy([{ column: 'program_id' }, { column: 'position' }])
    : [];
  return programs.map((program) => ({
    program,
    presenters: presenters.get(program.id) ?? [],
    slots: slots.filter((s) => s.program_id === program.id),
  }));
}

/** Programs with at least one published, non-cancelled broadcast overlapping [start, end), by title. */
export async function programsWithBroadcasts(db: Q, stationId: string, start: Date, end: Date): Promise<ProgramWithDetails[]> {
  const programs = await db<ProgramRow>('programs as pr')
    .where('pr.station_id', stationId)
    .whereExists(
      db('broadcasts as b')
        .select(db.raw('1'))
        .whereRaw('b.program_id = pr.id')
        .andWhere('b.station_id', stationId)
        .andWhere('b.published', true)
        .andWhere('b.cancelled', false)
        .andWhere('b.starts_at', '<', end)
        .andWhere('b.starts_at', '>', new Date(start.getTime() - MAX_BROADCAST_MS))
        .andWhere('b.ends_at', '>', start),
    )
    .orderBy([{ column: 'pr.title' }, { column: 'pr.id' }])
    .select('pr.*');
  return details(db, programs);
}

export async function programWithDetails(db: Q, stationId: string, programId: string): Promise<ProgramWithDetails | null> {
  const program = await db<ProgramRow>('programs').where({ id: programId, station_id: stationId }).first();
  if (!program) return null;
  const [withDetails] = await details(db, [program]);
  return withDetails;
}

export async function rundownOf(db: Q, broadcastId: string): Promise<RundownItemRow[]> {
  return db<RundownItemRow>('rundown_items')
    .where({ broadcast_id: broadcastId })
    .orderBy('position')
    .options({ name: 'schedule_rundown_of' });
}

/**
 * Instants inside (after, until] at which the on-air state can change: starts and ends of published,
 * non-cancelled broadcasts and planned rundown item boundaries.
 */
export async function boundariesBetween(db: Q, stationId: string, after: Date, until: Date): Promise<Date[]> {
  const result = await db.raw<{ rows: Array<{ at: Date }> }>(
    `
    WITH live AS (
      SELECT id, starts_at, ends_at FROM broadcasts
      WHERE station_id = :stationId AND published AND NOT cancelled
        AND starts_at <= :until AND ends_at > :after AND starts_at > :earliest
    ), items AS (
      SELECT i.planned_starts_at, i.planned_ends_at FROM rundown_items i JOIN live ON live.id = i.broadcast_id
    )
    SELECT DISTINCT at FROM (
      SELECT starts_at AS at FROM live UNION ALL SELECT ends_at FROM live
      UNION ALL SELECT planned_starts_at FROM items UNION ALL SELECT planned_ends_at FROM items WHERE planned_ends_at IS NOT NULL
    ) instants
    WHERE at > :after AND at <= :until
    ORDER BY at
    `,
    { stationId, after, until, earliest: new Date(after.getTime() - MAX_BROADCAST_MS) },
  );
  return result.rows.map((r) => r.at);
}

/**
 * The first start after `at` of a broadcast that can go on air (published, not cancelled): until
 * then, and until the current one ends, the on-air answer cannot change (routes.ts, cached reads).
 */
export async function nextBroadcastStart(db: Q, stationId: string, at: Date): Promise<Date | null> {
  const row = await db('broadcasts')
    .where({ station_id: stationId, published: true, cancelled: false })
    .andWhere('starts_at', '>', at)
    .min<{ next: Date | null }>('starts_at as next')
    .first();
  return row?.next ?? null;
}
