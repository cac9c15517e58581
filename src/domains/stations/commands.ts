import { IANAZone } from 'luxon';
import type { Db } from '../../lib/db.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { newStationId } from '../../lib/ids.ts';
import { canonicalJson } from '../content/canonical.ts';
import type { Invalidation } from '../../lib/invalidation.ts';
import { DEFAULT_MODULES, DEFAULT_UP_NEXT, defaultStreamKey, stationFromRow, type Station, type StationRow } from './model.ts';
import type { CreateStationBody, PatchStationBody } from './schemas.ts';
import { checkRadioDns, mergeRadioDns } from '../radiodns/settings.ts';
import { checkPodcasts, podcastsFromInput } from '../podcasts/settings.ts';

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

type Settings = Omit<PatchStationBody, 'slug' | 'name' | 'timezone' | 'radiodns' | 'podcasts'>;
type ProfileInput = NonNullable<Settings['profile']>;

/**
 * The profile as stored: each written stream entry gets its key (`stream-{n}` by 1-based position when
 * it has none) and its latency (default 0), so neither moves when entries are added later; a key used
 * twice is 400 naming the entry (decisions.md, "Listener time").
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
  if (input.modules !== undefined) cols.modules = JSON.stringify({ ...DEFAULT_MODULES, ...current?.modules, ...input.modules });
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

export async function createStation(db: Db, invalidation: Invalidation, input: CreateStationBody, now: Date): Promise<Station> {
  checkTimezone(input.timezone);
  const { slug, id, name, timezone, radiodns: radiodnsInput, podcasts: podcastsInput, ...settings } = input;
  const stationId = id ?? newStationId();
  // A new station has no media yet: a logo can only be set once one is uploaded (PATCH).
  const radiodns = radiodnsInput !== undefined ? mergeRadioDns(null, radiodnsInput) : null;
  if (radiodns) await checkRadioDns(db, stationId, radiodns);
  const podcasts = podcastsInput !== undefined ? podcastsFromInput(podcastsInput) : null;
  if (podcasts) await checkPodcasts(db, stationId, podcasts);
  try {
    const [row] = await db<StationRow>('stations')
      .insert({
        id: stationId,
        ...(radiodns ? { radiodns: JSON.stringify(radiodns) } : {}),
        ...(podcasts ? { podcasts: JSON.stringify(podcasts) } : {}),
        slug,
        name,
        timezone,
        modules: JSON.stringify(DEFAULT_MODULES) as unknown as StationRow['modules'],
        ...settingsColumns(settings),
        created_at: now,
        updated_at: now,
      } as Partial<StationRow>)
      .returning('*');
    const station = stationFromRow(row as StationRow);
    await invalidation.invalidate('station', station.id);
    return station;
  } catch (err) {
    throw uniqueViolation(err) ?? err;
  }
}

export async function updateStation(db: Db, invalidation: Invalidation, id: string, input: PatchStationBody, now: Date): Promise<Station> {
  checkTimezone(input.timezone);
  const { slug, name, timezone, radiodns: radiodnsInput, podcasts: podcastsInput, ...settings } = input;
  try {
    const station = await db.transaction(async (trx) => {
      const current = await trx<StationRow>('stations').where({ id }).forUpdate().first();
      if (!current) throw new NotFoundError('Station not found.');
      let radiodns: string | undefined;
      if (radiodnsInput !== undefined) {
        const merged = mergeRadioDns(current.radiodns, radiodnsInput);
        await checkRadioDns(trx, id, merged);
        radiodns = JSON.stringify(merged);
      }
      // PATCH replaces the whole podcasts object (decisions.md, "Podcasts").
      const podcasts = podcastsInput !== undefined ? podcastsFromInput(podcastsInput) : undefined;
      if (podcasts) await checkPodcasts(trx, id, podcasts);
      const changes: Partial<Record<keyof StationRow, unknown>> = {
        ...(radiodns !== undefined ? { radiodns } : {}),
        ...(podcasts !== undefined ? { podcasts: JSON.stringify(podcasts) } : {}),
        ...(slug !== undefined ? { slug } : {}),
        ...(name !== undefined ? { name } : {}),
        ...(timezone !== undefined ? { timezone } : {}),
        ...settingsColumns(settings, current),
      };
      // Writes are idempotent where the path names the id: the same PATCH again writes nothing
      // (`updatedAt` stays, the answer is the same).
      if (Object.entries(changes).every(([column, value]) => sameColumn(current[column as keyof StationRow], value))) {
        return { station: stationFromRow(current), changed: false };
      }
      const [row] = await trx<StationRow>('stations')
        .where({ id })
        .update({ ...changes, updated_at: now } as Partial<StationRow>)
        .returning('*');
      return { station: stationFromRow(row as StationRow), changed: true };
    });
    if (station.changed) await invalidation.invalidate('station', id);
    return station.station;
  } catch (err) {
    throw uniqueViolation(err) ?? err;
  }
}
