import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

// Broadcasts, programs and rundown items written straight into the tables, for tests of rundown
// following (the admin routes for them belong to the schedule area).

export interface PlannedItemRow {
  artist?: string | null;
  title: string;
  kind?: 'track' | 'talk' | 'ad' | 'jingle';
  durationSeconds?: number;
  plannedStartsAt?: Date;
}

export interface BroadcastRows {
  stationId: string;
  startsAt: Date;
  endsAt: Date;
  published?: boolean;
  cancelled?: boolean;
  cancellationReason?: string;
  items?: PlannedItemRow[];
}

/** A program, one broadcast and its rundown; planned times run back to back from the start by default. */
export async function insertBroadcast(
  db: Knex,
  rows: BroadcastRows,
): Promise<{ broadcastId: string; programId: string; itemIds: string[] }> {
  const programId = randomUUID();
  const broadcastId = randomUUID();
  await db('programs').insert({ id: programId, station_id: rows.stationId, title: 'Test Show' });
  await db('broadcasts').insert({
    id: broadcastId,
    station_id: rows.stationId,
    program_id: programId,
    title: 'Test Show',
    starts_at: rows.startsAt,
    ends_at: rows.endsAt,
    nature: 'live',
    published: rows.published ?? true,
    cancelled: rows.cancelled ?? false,
    cancellation_reason: rows.cancellationReason ?? '',
  });
  const itemIds: string[] = [];
  let next = rows.startsAt.getTime();
  for (const [position, item] of (rows.items ?? []).entries()) {
    const id = randomUUID();
    const duration = item.durationSeconds ?? 180;
    const start = item.plannedStartsAt?.getTime() ?? next;
    await db('rundown_items').insert({
      id,
      broadcast_id: broadcastId,
      station_id: rows.stationId,
      position,
      kind: item.kind ?? 'track',
      artist: item.artist ?? null,
      title: item.title,
      duration_seconds: duration,
      planned_starts_at: new Date(start),
      planned_ends_at: new Date(start + duration * 1000),
    });
    itemIds.push(id);
    next = start + duration * 1000;
  }
  return { broadcastId, programId, itemIds };
}
