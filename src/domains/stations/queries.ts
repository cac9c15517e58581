import type { Db } from '../../lib/db.ts';
import { DEFAULT_UP_NEXT, defaultStreamKey, PROFILE_KEYS, type Profile, type Station, type StationRow } from './model.ts';
import { moduleDefaults, stationSettings, stationStreamFields } from './settings.ts';

export function stationFromRow(row: StationRow): Station {
  const profile = {} as Record<string, unknown>;
  for (const key of PROFILE_KEYS) profile[key] = row.profile?.[key] ?? null;
  // Every value null when unset (docs/stations.md#the-station-document), inside the stream URL entries too.
  if (Array.isArray(profile.streamUrls)) {
    const fields = stationStreamFields();
    // Keys are stored at write time (and backfilled); the fallback only covers a row written otherwise.
    profile.streamUrls = (profile.streamUrls as Array<Record<string, unknown>>).map((s, i) => {
      const entry: Record<string, unknown> = {
        label: s.label ?? null,
        url: s.url,
        mime: s.mime ?? null,
        bitrateKbps: s.bitrateKbps ?? null,
        key: s.key ?? defaultStreamKey(i),
        latencySeconds: s.latencySeconds ?? 0,
      };
      for (const field of fields) entry[field.key] = field.fromStored(s[field.key]);
      return entry;
    });
  }
  const station: Record<string, unknown> = {
    id: row.id,
    slug: row.slug,
    name: row.name,
    timezone: row.timezone,
    profile: profile as unknown as Profile,
    active: row.active,
    publicOnline: row.public_online,
    modules: { ...moduleDefaults(), ...row.modules },
    entitlements: { weather: false, traffic: false, ...row.entitlements },
    redistribution: { weather: false, traffic: false, ...row.redistribution },
    push: { provider: row.push_provider },
    artworkLookup: row.artwork_lookup,
    nowPlayingFreshnessSeconds: row.now_playing_freshness_seconds,
    rundownFollowing: row.rundown_following,
    upNext: { ...DEFAULT_UP_NEXT, ...row.up_next },
  };
  // The features' settings, every key present, between the core's settings and the timestamps (the
  // admin view's key order).
  for (const setting of stationSettings()) station[setting.key] = setting.fromStored(row[setting.column]);
  station.createdAt = row.created_at.toISOString();
  station.updatedAt = row.updated_at.toISOString();
  return station as unknown as Station;
}

export async function findStationBySlug(db: Db, slug: string): Promise<Station | null> {
  const row = await db<StationRow>('stations').where({ slug }).first();
  return row ? stationFromRow(row) : null;
}

export async function findStationById(db: Db, id: string): Promise<Station | null> {
  const row = await db<StationRow>('stations').where({ id }).first();
  return row ? stationFromRow(row) : null;
}
