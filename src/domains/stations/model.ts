import { isPublic } from '../../http/subjects.ts';
import { radiodnsFromStored, type RadioDns } from '../radiodns/model.ts';
import { podcastsFromStored, type Podcasts } from '../podcasts/model.ts';

// The framework's gates see these types through its registry (http/subjects.ts).
declare module '../../http/subjects.ts' {
  interface RouteSubjects {
    station: Station;
    moduleKey: ModuleKey;
  }
}

// The station and its operator-managed settings (decisions.md, "Station settings").

export const MODULE_KEYS = [
  'schemas',
  'content',
  'schedule',
  'programs',
  'currentBroadcast',
  'nowPlaying',
  'trackHistory',
  'calendar',
  'graphql',
  'media',
  'push',
  'realtime',
  'weather',
  'traffic',
] as const;
export type ModuleKey = (typeof MODULE_KEYS)[number];
export type Modules = Record<ModuleKey, boolean>;

export const PUSH_PROVIDERS = ['fcm', 'apns', 'expo'] as const;
export type PushProvider = (typeof PUSH_PROVIDERS)[number];

// This file owns the station's constants and types; schemas.ts builds its schemas from them (never the
// other way round, so the two never import each other).

/** A stream entry's key: `^[a-z0-9][a-z0-9-]{0,31}$`, unique within the station (decisions.md, "Listener time"). */
export const STREAM_KEY_PATTERN = '^[a-z0-9][a-z0-9-]{0,31}$';
/** How far behind on-air time a stream's listeners hear, at most. */
export const MAX_LATENCY_SECONDS = 600;

/** The key a stream entry without one gets: `stream-{n}` by its 1-based position (stored at write time). */
export const defaultStreamKey = (index: number): string => `stream-${index + 1}`;

export interface StreamUrl {
  label: string | null;
  url: string;
  mime: string | null;
  bitrateKbps: number | null;
  key: string;
  latencySeconds: number;
}

/** Up next (decisions.md, "Up next and the live answer"): off by default, 1–5 items. */
export interface UpNextSetting {
  enabled: boolean;
  count: number;
}
export const DEFAULT_UP_NEXT: UpNextSetting = Object.freeze({ enabled: false, count: 1 });

/** The stored and served profile, every key present (schemas.ts checks that `ProfileOut` has this shape). */
export interface Profile {
  tagline: string | null;
  description: string | null;
  frequencyLabel: string | null;
  websiteUrls: string[] | null;
  streamUrls: StreamUrl[] | null;
  contactEmail: string | null;
  phone: string | null;
  address: string | null;
  socialLinks: Array<{ network: string; url: string }> | null;
}

export const PROFILE_KEYS = [
  'tagline',
  'description',
  'frequencyLabel',
  'websiteUrls',
  'streamUrls',
  'contactEmail',
  'phone',
  'address',
  'socialLinks',
] as const satisfies ReadonlyArray<keyof Profile>;

export interface Station {
  id: string;
  slug: string;
  name: string;
  timezone: string;
  profile: Profile;
  active: boolean;
  publicOnline: boolean;
  modules: Modules;
  entitlements: { weather: boolean; traffic: boolean };
  redistribution: { weather: boolean; traffic: boolean };
  push: { provider: PushProvider | null };
  artworkLookup: boolean;
  nowPlayingFreshnessSeconds: number;
  rundownFollowing: boolean;
  upNext: UpNextSetting;
  /** RadioDNS SPI (decisions.md, "Hybrid radio"); every key present. */
  radiodns: RadioDns;
  /** Podcast feeds (decisions.md, "Podcasts"); every key present. */
  podcasts: Podcasts;
  createdAt: string;
  updatedAt: string;
}

export const DEFAULT_MODULES: Modules = Object.freeze({
  schemas: true,
  content: true,
  schedule: true,
  programs: true,
  currentBroadcast: true,
  nowPlaying: true,
  trackHistory: true,
  calendar: true,
  graphql: true,
  media: true,
  push: true,
  realtime: true,
  weather: false,
  traffic: false,
});

export interface StationRow {
  id: string;
  slug: string;
  name: string;
  timezone: string;
  profile: Partial<Profile>;
  active: boolean;
  public_online: boolean;
  modules: Partial<Modules>;
  entitlements: Partial<Station['entitlements']>;
  redistribution: Partial<Station['redistribution']>;
  push_provider: PushProvider | null;
  artwork_lookup: boolean;
  now_playing_freshness_seconds: number;
  rundown_following: boolean;
  up_next: Partial<UpNextSetting> | null;
  radiodns: Partial<RadioDns> | null;
  podcasts: Partial<Podcasts> | null;
  created_at: Date;
  updated_at: Date;
}

export function stationFromRow(row: StationRow): Station {
  const profile = {} as Record<string, unknown>;
  for (const key of PROFILE_KEYS) profile[key] = row.profile?.[key] ?? null;
  // Every value null when unset (decisions.md), inside the stream URL entries too.
  if (Array.isArray(profile.streamUrls)) {
    // Keys are stored at write time (and backfilled); the fallback only covers a row written otherwise.
    profile.streamUrls = (profile.streamUrls as Array<Record<string, unknown>>).map((s, i) => ({
      label: s.label ?? null,
      url: s.url,
      mime: s.mime ?? null,
      bitrateKbps: s.bitrateKbps ?? null,
      key: s.key ?? defaultStreamKey(i),
      latencySeconds: s.latencySeconds ?? 0,
    }));
  }
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    timezone: row.timezone,
    profile: profile as unknown as Profile,
    active: row.active,
    publicOnline: row.public_online,
    modules: { ...DEFAULT_MODULES, ...row.modules },
    entitlements: { weather: false, traffic: false, ...row.entitlements },
    redistribution: { weather: false, traffic: false, ...row.redistribution },
    push: { provider: row.push_provider },
    artworkLookup: row.artwork_lookup,
    nowPlayingFreshnessSeconds: row.now_playing_freshness_seconds,
    rundownFollowing: row.rundown_following,
    upNext: { ...DEFAULT_UP_NEXT, ...row.up_next },
    radiodns: radiodnsFromStored(row.radiodns),
    podcasts: podcastsFromStored(row.podcasts),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Weather and traffic are delivered only when switched on, entitled and cleared for redistribution. */
export function delivers(station: Station, what: 'weather' | 'traffic'): boolean {
  return station.modules[what] && station.entitlements[what] && station.redistribution[what];
}

/** Whether listeners can reach the station at all (the first gate). */
export { isPublic };
