import type { Services } from '../../services.ts';
import type { Tx } from '../../lib/db.ts';
import { ConflictError, NotFoundError, ProgramInUseError, ValidationError, type Issue } from '../../lib/errors.ts';
import {
  MAX_BROADCAST_DAYS,
  MAX_BROADCAST_MS,
  type BroadcastRow,
  type PresenterRow,
  type ProgramRow,
  type ResolvedBroadcast,
} from './model.ts';
import { programWithDetails, type ProgramWithDetails } from './queries.ts';
import type { BroadcastBody, PresenterBody, ProgramBody } from './schemas.ts';
import { refreshScheduleRowIn } from './feed.ts';
import { lockStation } from '../stations/lock.ts';
import { refreshOnAirIn } from './onair.ts';
import { planTimers } from './timers.ts';
import { invalidateReads } from '../../lib/readCache.ts';
import { canonicalJson } from '../../lib/canonicalJson.ts';
import { stationImageVersion } from '../media/images.ts';

// Admin writes of the schedule. Each runs inside the caller's transaction (so an import can batch
// many); `scheduleChanged` then rebuilds the feed rows in that same transaction and re-plans the
// timing jobs once it commits.

/** Locks the station (serialising its schedule writes and feed rebuilds) or 404s. */
export async function stationForWrite(tx: Tx, stationId: string): Promise<{ timezone: string }> {
  const station = await lockStation(tx, stationId);
  if (!station) throw new NotFoundError('Station not found.');
  return station;
}

function ensureOwned(row: { station_id: string } | undefined, stationId: string, what: string): void {
  if (row && row.station_id !== stationId) throw new ConflictError(`This ${what} id belongs to another station.`);
}

/**
 * The presenter ids in canonical (lowercase) form; 400 naming each one (at `path.i`) that is given
 * twice or is not a presenter of the station.
 */
async function checkPresenters(tx: Tx, stationId: string, given: string[], path: string): Promise<string[]> {
  const ids = given.map((id) => id.toLowerCase());
  if (ids.length === 0) return ids;
  const found = new Set(
    (await tx.trx('presenters').where({ station_id: stationId }).whereIn('id', ids).select<Array<{ id: string }>>('id')).map((r) => r.id),
  );
  const issues: Issue[] = ids.flatMap((id, i) => {
    if (ids.indexOf(id) !== i) return [{ path: `${path}.${i}`, code: 'duplicate', message: `presenter ${id} is listed twice` }];
    return found.has(id) ? [] : [{ path: `${path}.${i}`, code: 'unknown_id', message: `no presenter ${id} exists at this station` }];
  });
  if (issues.length) throw new ValidationError('Unknown presenter.', issues);
  return ids;
}

/**
 * The picture of a program or presenter in canonical (lowercase) form, null when none; 400 naming
 * `imageVersionId` when it is not an uploaded image version of this station (the artwork setting's rule).
 */
async function checkImage(tx: Tx, stationId: string, given: string | null | undefined): Promise<string | null> {
  if (!given) return null;
  const id = given.toLowerCase();
  if (!(await stationImageVersion(tx.trx, stationId, id)))
    throw new ValidationError('imageVersionId is not an uploaded image version of this station.', [
      { path: 'imageVersionId', code: 'unknown_id', message: 'must be an uploaded image version of this station' },
    ]);
  return id;
}

// docs/schedule.md#admin-api: writes are idempotent where the path names the id. A PUT that stores what is already
// stored writes nothing — `updatedAt` stays, and the route answers the same object as the first time.

export async function savePresenter(tx: Tx, stationId: string, id: string, body: PresenterBody, now: Date): Promise<PresenterRow> {
  const existing = await tx.trx<PresenterRow>('presenters').where({ id }).first();
  ensureOwned(existing, stationId, 'presenter');
  // A PUT replaces the whole presenter: no `imageVersionId` means no picture.
  const imageVersionId = await checkImage(tx, stationId, body.imageVersionId);
  if (existing?.title === body.title && existing.image_version_id === imageVersionId) return existing;
  const [row] = await tx
    .trx<PresenterRow>('presenters')
    .insert({ id, station_id: stationId, title: body.title, image_version_id: imageVersionId, created_at: now, updated_at: now })
    .onConflict('id')
    .merge(['title', 'image_version_id', 'updated_at'])
    .returning('*');
  return row as PresenterRow;
}

export async function saveProgram(tx: Tx, stationId: string, id: string, body: ProgramBody, now: Date): Promise<ProgramWithDetails> {
  ensureOwned(await tx.trx<ProgramRow>('programs').where({ id }).first(), stationId, 'program');
  const presenterIds = await checkPresenters(tx, stationId, body.presenterIds ?? [], 'presenterIds');
  const imageVersionId = await checkImage(tx, stationId, body.imageVersionId);
  const current = await programWithDetails(tx.trx, stationId, id);
  if (current && sameProgram(current, body, presenterIds, imageVersionId)) return current;
  await tx
    .trx<ProgramRow>('programs')
    .insert({
      id,
      station_id: stationId,
      title: body.title,
      description: body.description ?? null,
      profile_id: body.profileId ?? null,
      image_version_id: imageVersionId,
      created_at: now,
      updated_at: now,
    })
    .onConflict('id')
    .merge(['title', 'description', 'profile_id', 'image_version_id', 'updated_at']);
  await tx.trx('program_presenters').where({ program_id: id }).delete();
  if (presenterIds.length)
    await tx
      .trx('program_presenters')
      .insert(presenterIds.map((presenterId, position) => ({ program_id: id, presenter_id: presenterId, position })));
  await tx.trx('program_slots').where({ program_id: id }).delete();
  const slots = body.slots ?? [];
  if (slots.length) {
    await tx.trx('program_slots').insert(
      slots.map((slot, position) => ({
        program_id: id,
        position,
        weekday: slot.weekday,
        start_time: slot.startTime,
        duration_minutes: slot.durationMinutes,
      })),
    );
  }
  return (await programWithDetails(tx.trx, stationId, id)) as ProgramWithDetails;
}

function sameProgram(
  { program, presenters, slots }: ProgramWithDetails,
  body: ProgramBody,
  presenterIds: string[],
  imageVersionId: string | null,
): boolean {
  const stored = {
    title: program.title,
    description: program.description,
    profileId: program.profile_id,
    imageVersionId: program.image_version_id,
    presenterIds: presenters.map((p) => p.id),
    slots: slots.map((slot) => [slot.weekday, slot.start_time, slot.duration_minutes]),
  };
  const sent = {
    title: body.title,
    description: body.description ?? null,
    profileId: body.profileId ?? null,
    imageVersionId,
    presenterIds,
    slots: (body.slots ?? []).map((slot) => [slot.weekday, slot.startTime, slot.durationMinutes]),
  };
  return canonicalJson(stored) === canonicalJson(sent);
}

/** Whether a stored broadcast already holds these values (ids compared in canonical lower case). */
function sameBroadcast(row: BroadcastRow, values: Omit<BroadcastRow, 'id' | 'station_id' | 'created_at' | 'updated_at'>): boolean {
  const comparable = (b: typeof values) => ({
    title: b.title,
    nature: b.nature,
    published: b.published,
    cancelled: b.cancelled,
    cancellation_reason: b.cancellation_reason,
    presenter_ids: b.presenter_ids,
    program_id: b.program_id.toLowerCase(),
    repeat_of_id: b.repeat_of_id?.toLowerCase() ?? null,
    starts_at: b.starts_at.getTime(),
    ends_at: b.ends_at.getTime(),
  });
  return canonicalJson(comparable(row)) === canonicalJson(comparable(values));
}

/** Validates a broadcast body; returns the canonical presenter override (null: the program's). */
async function checkBroadcast(
  tx: Tx,
  stationId: string,
  id: string,
  body: BroadcastBody,
  startsAt: Date,
  endsAt: Date,
): Promise<string[] | null> {
  const issues: Issue[] = [];
  if (!(endsAt > startsAt)) issues.push({ path: 'endsAt', code: 'out_of_range', message: 'endsAt must be after startsAt' });
  else if (endsAt.getTime() - startsAt.getTime() > MAX_BROADCAST_MS)
    issues.push({ path: 'endsAt', code: 'too_big', message: `a broadcast lasts at most ${MAX_BROADCAST_DAYS} days` });
  if (!(await tx.trx('programs').where({ id: body.programId, station_id: stationId }).first('id'))) {
    issues.push({ path: 'programId', code: 'unknown_id', message: `no program ${body.programId} exists at this station` });
  }
  if (body.repeatOfId) {
    if (body.repeatOfId.toLowerCase() === id.toLowerCase())
      issues.push({ path: 'repeatOfId', code: 'invalid_value', message: 'a broadcast cannot repeat itself' });
    else if (!(await tx.trx('broadcasts').where({ id: body.repeatOfId, station_id: stationId }).first('id'))) {
      issues.push({ path: 'repeatOfId', code: 'unknown_id', message: `no broadcast ${body.repeatOfId} exists at this station` });
    }
  }
  if (issues.length) throw new ValidationError('Invalid broadcast.', issues);
  return body.presenterIds ? checkPresenters(tx, stationId, body.presenterIds, 'presenterIds') : null;
}

/** Stores a broadcast; `changed` is false when it already held exactly these values (nothing written). */
export async function saveBroadcast(
  tx: Tx,
  stationId: string,
  id: string,
  body: BroadcastBody,
  now: Date,
): Promise<{ row: BroadcastRow; changed: boolean }> {
  const existing = await tx.trx<BroadcastRow>('broadcasts').where({ id }).forUpdate().first();
  ensureOwned(existing, stationId, 'broadcast');
  const startsAt = new Date(body.startsAt);
  const endsAt = new Date(body.endsAt);
  const presenterIds = await checkBroadcast(tx, stationId, id, body, startsAt, endsAt);
  // docs/schedule.md#schedule: cancelled when `cancelled: true` or a non-empty reason; the reason is "" otherwise.
  const reason = (body.cancellationReason ?? '').trim();
  const cancelled = body.cancelled === true || reason !== '';
  const values = {
    program_id: body.programId,
    title: body.title ?? null,
    starts_at: startsAt,
    ends_at: endsAt,
    nature: body.nature,
    published: body.published ?? true,
    cancelled,
    cancellation_reason: cancelled ? reason : '',
    repeat_of_id: body.repeatOfId ?? null,
    presenter_ids: presenterIds,
  };
  if (existing && sameBroadcast(existing, values)) return { row: existing, changed: false };
  if (existing && existing.starts_at.getTime() !== startsAt.getTime()) {
    // A moved broadcast takes its rundown along: items keep their offsets from the start.
    const shiftMs = startsAt.getTime() - existing.starts_at.getTime();
    await tx
      .trx('rundown_items')
      .where({ broadcast_id: id })
      .update({
        planned_starts_at: tx.trx.raw("planned_starts_at + ? * interval '1 millisecond'", [shiftMs]),
        planned_ends_at: tx.trx.raw("planned_ends_at + ? * interval '1 millisecond'", [shiftMs]),
      });
  }
  const [row] = await tx
    .trx<BroadcastRow>('broadcasts')
    .insert({ id, station_id: stationId, ...values, created_at: now, updated_at: now })
    .onConflict('id')
    .merge([...(Object.keys(values) as Array<keyof BroadcastRow>), 'updated_at'])
    .returning('*');
  return { row: row as BroadcastRow, changed: true };
}

/** Deletes a broadcast of the station (its rundown goes with it); false when there was none. */
export async function removeBroadcast(tx: Tx, stationId: string, id: string): Promise<boolean> {
  return (await tx.trx('broadcasts').where({ id, station_id: stationId }).delete()) > 0;
}

/**
 * Deletes a presenter of the station; it is also taken off every program's presenter list (a foreign
 * key cascade, with the devices' follows of it) and every broadcast's. False when there was none.
 */
export async function removePresenter(tx: Tx, stationId: string, id: string): Promise<boolean> {
  const removed = await tx.trx('presenters').where({ id, station_id: stationId }).delete();
  if (removed === 0) return false;
  await tx.trx.raw(
    'UPDATE broadcasts SET presenter_ids = array_remove(presenter_ids, ?::uuid) WHERE station_id = ? AND ?::uuid = ANY(presenter_ids)',
    [id, stationId, id],
  );
  return true;
}

/**
 * Deletes a program of the station (its slots, presenter list and the devices' follows go with it);
 * 409 PROGRAM_IN_USE naming how many broadcasts still reference it. False when there was none.
 */
export async function removeProgram(tx: Tx, stationId: string, id: string): Promise<boolean> {
  const program = await tx.trx('programs').where({ id, station_id: stationId }).forUpdate().first('id');
  if (!program) return false;
  const row = await tx.trx('broadcasts').where({ program_id: id }).first(tx.trx.raw('count(*)::int AS n'));
  const n = (row as { n: number }).n;
  if (n > 0) throw new ProgramInUseError(`${n} broadcast${n === 1 ? '' : 's'} still reference${n === 1 ? 's' : ''} this program.`);
  await tx.trx('programs').where({ id }).delete();
  return true;
}

/**
 * After a schedule write, in the same transaction: rebuild the `schedule` and `on-air` rows (each
 * written only when it changed); after commit, re-plan the station's timing jobs.
 */
export async function scheduleChanged(
  tx: Tx,
  svc: Services,
  stationId: string,
  timezone: string,
  /** `removed`: a broadcast this write deleted, as it was (a `broadcast.ended` for it describes it so). */
  options: { replan?: boolean; removed?: ResolvedBroadcast | null } = {},
): Promise<void> {
  const now = svc.clock.now();
  // Listener reads (schedule, programs, current broadcast, calendar) show it from the next read on.
  tx.afterCommit(() => invalidateReads(svc, stationId, 'schedule'));
  await refreshScheduleRowIn(tx, svc, stationId, timezone, now, now);
  await refreshOnAirIn(tx, svc.bus, stationId, now, now, svc, options.removed);
  if (options.replan === false) return;
  tx.afterCommit(async () => {
    try {
      await planTimers(svc, stationId, now);
    } catch (err) {
      // The write is durable; the hourly sweep re-plans what this could not.
      svc.logger.warn({ err, stationId }, 'could not re-plan schedule timers');
    }
  });
}
