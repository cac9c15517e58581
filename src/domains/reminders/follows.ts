import { inTransaction, type Db } from '../../lib/db.ts';
import { NotFoundError, ValidationError, type Issue } from '../../lib/errors.ts';
import { sha256Hex } from '../../lib/tokens.ts';
import type { FollowerCounts, FollowInput, Follow } from './schemas.ts';

// A device's follows, replaced as a whole (docs/push.md#following-for-station-app-developers). Stored per device
// (station, token hash) with their position, so the answer lists them as given.

interface FollowRow {
  program_id: string | null;
  presenter_id: string | null;
  remind_before_minutes: number;
}

const present = (row: FollowRow): Follow =>
  row.program_id !== null
    ? { programId: row.program_id, remindBeforeMinutes: row.remind_before_minutes }
    : { presenterId: row.presenter_id as string, remindBeforeMinutes: row.remind_before_minutes };

/** Ids of `table` (programs or presenters) among `ids` that belong to the station. */
async function known(db: Db, table: 'programs' | 'presenters', stationId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db(table).where({ station_id: stationId }).whereIn('id', ids).select<Array<{ id: string }>>('id');
  return new Set(rows.map((r) => r.id));
}

/**
 * 400 naming each index that holds neither or both ids, an unknown (or another station's) program or
 * presenter, or the later occurrence of one given twice.
 */
async function checkFollows(db: Db, stationId: string, follows: FollowInput[]): Promise<void> {
  const ids = (key: 'programId' | 'presenterId') => follows.flatMap((f) => (f[key] ? [f[key].toLowerCase()] : []));
  const [programs, presenters] = await Promise.all([
    known(db, 'programs', stationId, ids('programId')),
    known(db, 'presenters', stationId, ids('presenterId')),
  ]);
  const seen = new Set<string>();
  const issues: Issue[] = [];
  follows.forEach((f, i) => {
    const path = `follows.${i}`;
    if ((f.programId === undefined) === (f.presenterId === undefined)) {
      issues.push({ path, code: 'invalid_value', message: `${path} must name exactly one of programId and presenterId` });
      return;
    }
    const [kind, id, found] = f.programId
      ? (['program', f.programId.toLowerCase(), programs] as const)
      : (['presenter', (f.presenterId as string).toLowerCase(), presenters] as const);
    const key = `${kind}:${id}`;
    if (seen.has(key)) issues.push({ path, code: 'duplicate', message: `${path}: ${kind} ${id} is already followed at an earlier index` });
    else if (!found.has(id)) issues.push({ path, code: 'unknown_id', message: `${path}: no ${kind} ${id} exists at this station` });
    seen.add(key);
  });
  if (issues.length) throw new ValidationError('Invalid follows.', issues);
}

/** Replaces the device's follows; 404 when the token is not registered for the station. */
export async function replaceFollows(
  db: Db,
  input: { stationId: string; token: string; follows: FollowInput[]; now: Date },
): Promise<Follow[]> {
  await checkFollows(db, input.stationId, input.follows);
  const tokenHash = sha256Hex(input.token);
  return inTransaction(db, async ({ trx }) => {
    // The device row is locked so a concurrent unregister cannot leave follows behind (the foreign key
    // would refuse them anyway) and two replacements of one device never interleave.
    const device = await trx('push_devices').where({ station_id: input.stationId, token_hash: tokenHash }).forUpdate().first('token_hash');
    if (!device) throw new NotFoundError('This device token is not registered for the station.');
    await trx('push_follows').where({ station_id: input.stationId, token_hash: tokenHash }).delete();
    if (input.follows.length === 0) return [];
    const rows = await trx('push_follows')
      .insert(
        input.follows.map((f, position) => ({
          station_id: input.stationId,
          token_hash: tokenHash,
          position,
          program_id: f.programId?.toLowerCase() ?? null,
          presenter_id: f.presenterId?.toLowerCase() ?? null,
          remind_before_minutes: f.remindBeforeMinutes ?? 0,
          created_at: input.now,
        })),
      )
      .returning<FollowRow[]>(['program_id', 'presenter_id', 'remind_before_minutes', 'position']);
    return rows.map(present);
  });
}

/** The operators' view: devices following each program and presenter of the station. */
export async function followerCounts(db: Db, stationId: string): Promise<FollowerCounts> {
  const [programs, presenters] = await Promise.all([
    db('push_follows as f')
      .join('programs as p', 'p.id', 'f.program_id')
      .where('f.station_id', stationId)
      .groupBy('p.id', 'p.title')
      .orderBy([{ column: 'followers', order: 'desc' }, { column: 'p.title' }])
      .select<Array<{ id: string; title: string; followers: number }>>('p.id', 'p.title', db.raw('count(*)::int AS followers')),
    db('push_follows as f')
      .join('presenters as p', 'p.id', 'f.presenter_id')
      .where('f.station_id', stationId)
      .groupBy('p.id', 'p.title')
      .orderBy([{ column: 'followers', order: 'desc' }, { column: 'p.title' }])
      .select<Array<{ id: string; title: string; followers: number }>>('p.id', 'p.title', db.raw('count(*)::int AS followers')),
  ]);
  return {
    programs: programs.map((p) => ({ programId: p.id, title: p.title, followers: p.followers })),
    presenters: presenters.map((p) => ({ presenterId: p.id, name: p.title, followers: p.followers })),
  };
}
