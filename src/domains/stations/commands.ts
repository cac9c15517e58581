import { IANAZone } from 'luxon';
import type { Db } from '../../lib/db.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { newStationId } from '../../lib/ids.ts';
import { canonicalJson } from '../../lib/canonicalJson.ts';
import type { Invalidation } from '../../lib/invalidation.ts';
import { DEFAULT_UP_NEXT, defaultStreamKey, type SettingKey, type StationRow } from './model.ts';
import { stationFromRow } from './queries.ts';
import type { CreateStationBody, PatchStationBody } from './schemas.ts';
import { moduleDefaults, stationSettings, stationStreamFields } from './settings.ts';
import { stationChange, type StationChange } from './changes.ts';

/** Intl, and so Luxon, also takes UTC offsets such as "+01:00" as a zone; they are no IANA names. */
const UTC_OFFSET = /^[+-]/;

function checkTimezone(timezone: string | undefined): void {
  if (timezone !== undefined && (UTC_OFFSET.test(timezone) || !IANAZone.isValidZone(timezone))) {
    throw new ValidationError('Unknown time zone.', [
      { path: 'timezone', code: 'invalid_value', message: `timezone must be an IANA time zone name, got "${timezone}"` },
    ]);
  }
}

function uniqueViolation(err: unknown): ConflictError | null {
  const e = err as { code?: string; constraint?: string };
  if (e.code !== '23505') return null;
  if (e.constraint?.includes('slug'))
    return new ConflictError('A station with this slug exists.', [
      { path: 'slug', code: 'taken', message: 'slug is already used by another station' },
    ]);
  return new ConflictError('A station with this id exists.', [
    { path: 'id', code: 'taken', message: 'id is already used by another station' },
  ]);
}

type Settings = Omit<PatchStationBody, 'slug' | 'name' | 'timezone' | SettingKey>;
type ProfileInput = NonNullable<Settings['profile']>;

/**
 * The features' settings present in `input` as their columns' values, each checked by its feature (in
 * registration order). `current` is the stored row on PATCH: a `merge` setting merges into it.
 */
async function featureColumns(
  db: Db,
  stationId: string,
  input: Partial<Record<string, unknown>>,
  current?: StationRow,
): Promise<Record<string, string>> {
  const cols: Record<string, string> = {};
  for (const setting of stationSettings()) {
    const sent = input[setting.key];
    if (sent === undefined) continue;
    const base = setting.fromStored(setting.patch === 'merge' ? current?.[setting.column] : null);
    const value = setting.fromInput(sent, base);
    await setting.check?.(value, { db, stationId });
    cols[setting.column] = JSON.stringify(value);
  }
  return cols;
}

/** The features' checks of each written stream entry's fields (`profile.streamUrls.{i}.{field}`). */
async function checkStreamFields(db: Db, stationId: string, profile: ProfileInput | undefined): Promise<void> {
  const fields = stationStreamFields();
  if (!profile?.streamUrls || fields.length === 0) return;
  for (const [i, entry] of profile.streamUrls.entries()) {
    for (const field of fields) {
      const value = field.fromStored((entry as Record<string, unknown>)[field.key]);
      await field.check?.(value, { db, stationId, path: `profile.streamUrls.${i}.${field.key}` });
    }
  }
}

/** Splits a body into the core's fields and the features' settings (by registered key). */
function splitSettings<T extends Record<string, unknown>>(input: T): { core: T; features: Partial<Record<string, unknown>> } {
  const keys = new Set<string>(stationSettings().map((s) => s.key));
  const core = {} as Record<string, unknown>;
  const features: Partial<Record<string, unknown>> = {};
  for (const [key, value] of Object.entries(input)) (keys.has(key) ? features : core)[key] = value;
  return { core: core as T, features };
}

/**
 * The profile as stored: each written stream entry gets its key (`stream-{n}` by 1-based position when
 * it has none) and its latency (default 0), so neither moves when entries are added later; a key used
 * twice is 400 naming the entry (docs/now-playing.md#heard-time-answers-in-the-listeners-time).
 */
function profileToStore(profile: ProfileInput): ProfileInput {
  if (!profile.streamUrls) return profile;
  const seen = new Map<string, number>();
  const streamUrls = profile.streamUrls.map((entry, i) => {
    const key = entry.key ?? defaultStreamKey(i);
    const first = seen.get(key);
    if (first !== undefined)
      throw new ValidationError('Duplicate stream key.', [
        {
          path: `profile.streamUrls.${i}.key`,
          code: 'duplicate',
          message: `profile.streamUrls.${i}.key "${key}" is already the key of profile.streamUrls.${first}; keys are unique within the station`,
        },
      ]);
    seen.set(key, i);
    return { ...entry, key, latencySeconds: entry.latencySeconds ?? 0 };
  });
  return { ...profile, streamUrls };
}

/** Column values for the settings present in the input; JSON settings merge into what is stored. */
function settingsColumns(input: Settings, current?: StationRow): Partial<Record<keyof StationRow, unknown>> {
  const cols: Partial<Record<keyof StationRow, unknown>> = {};
  if (input.profile !== undefined) cols.profile = JSON.stringify({ ...current?.profile, ...profileToStore(input.profile) });
  if (input.modules !== undefined) cols.modules = JSON.stringify({ ...moduleDefaults(), ...current?.modules, ...input.modules });
  if (input.entitlements !== undefined) cols.entitlements = JSON.stringify({ ...current?.entitlements, ...input.entitlements });
  if (input.redistribution !== undefined) cols.redistribution = JSON.stringify({ ...current?.redistribution, ...input.redistribution });
  if (input.push !== undefined) cols.push_provider = input.push.provider;
  if (input.artworkLookup !== undefined) cols.artwork_lookup = input.artworkLookup;
  if (input.nowPlayingFreshnessSeconds !== undefined) cols.now_playing_freshness_seconds = input.nowPlayingFreshnessSeconds;
  if (input.rundownFollowing !== undefined) cols.rundown_following = input.rundownFollowing;
  if (input.upNext !== undefined) cols.up_next = JSON.stringify({ ...DEFAULT_UP_NEXT, ...current?.up_next, ...input.upNext });
  if (input.active !== undefined) cols.active = input.active;
  if (input.publicOnline !== undefined) cols.public_online = input.publicOnline;
  return cols;
}

/** Whether a stored column already holds a value `settingsColumns` (or a plain field) would write. */
function sameColumn(stored: unknown, value: unknown): boolean {
  if (stored !== null && typeof stored === 'object' && typeof value === 'string')
    return canonicalJson(stored) === canonicalJson(JSON.parse(value));
  return stored === value;
}

/** Creates the station; the caller announces the change (`stationChanged`) once it is committed. */
export async function createStation(db: Db, invalidation: Invalidation, input: CreateStationBody, now: Date): Promise<StationChange> {
  checkTimezone(input.timezone);
  const { core, features } = splitSettings(input);
  const { slug, id, name, timezone, ...settings } = core;
  const stationId = id ?? newStationId();
  // A new station has no media yet: a setting naming one can only be set once it is uploaded (PATCH).
  const columns = await featureColumns(db, stationId, features);
  await checkStreamFields(db, stationId, settings.profile);
  try {
    const [row] = await db<StationRow>('stations')
      .insert({
        id: stationId,
        ...columns,
        slug,
        name,
        timezone,
        modules: JSON.stringify(moduleDefaults()) as unknown as StationRow['modules'],
        ...settingsColumns(settings),
        created_at: now,
        updated_at: now,
      } as Partial<StationRow>)
      .returning('*');
    const station = stationFromRow(row as StationRow);
    await invalidation.invalidate('station', station.id);
    return stationChange(null, station);
  } catch (err) {
    throw uniqueViolation(err) ?? err;
  }
}

/**
 * Changes what `input` names; the caller announces the change (`stationChanged`) once it is committed.
 * The same PATCH again changes nothing (an empty `changed`).
 */
export async function updateStation(
  db: Db,
  invalidation: Invalidation,
  id: string,
  input: PatchStationBody,
  now: Date,
): Promise<StationChange> {
  checkTimezone(input.timezone);
  const { core, features } = splitSettings(input);
  const { slug, name, timezone, ...settings } = core;
  try {
    const change = await db.transaction(async (trx) => {
      const current = await trx<StationRow>('stations').where({ id }).forUpdate().first();
      if (!current) throw new NotFoundError('Station not found.');
      // Each feature merges or replaces its setting (radiodns merges, podcasts replaces: docs/stations.md#station-settings).
      const columns = await featureColumns(trx, id, features, current);
      await checkStreamFields(trx, id, settings.profile);
      const changes: Partial<Record<keyof StationRow, unknown>> = {
        ...columns,
        ...(slug !== undefined ? { slug } : {}),
        ...(name !== undefined ? { name } : {}),
        ...(timezone !== undefined ? { timezone } : {}),
        ...settingsColumns(settings, current),
      };
      const before = stationFromRow(current);
      // Writes are idempotent where the path names the id: the same PATCH again writes nothing
      // (`updatedAt` stays, the answer is the same).
      if (Object.entries(changes).every(([column, value]) => sameColumn(current[column as keyof StationRow], value))) {
        return stationChange(before, before);
      }
      const [row] = await trx<StationRow>('stations')
        .where({ id })
        .update({ ...changes, updated_at: now } as Partial<StationRow>)
        .returning('*');
      return stationChange(before, stationFromRow(row as StationRow));
    });
    if (change.changed.size > 0) await invalidation.invalidate('station', id);
    return change;
  } catch (err) {
    throw uniqueViolation(err) ?? err;
  }
}
