import { isPublic } from '../../http/subjects.ts';

// The framework's gates see these types through its registry (http/subjects.ts).
declare module '../../http/subjects.ts' {
  interface RouteSubjects {
    station: Station;
    moduleKey: ModuleKey;
  }
}

// The station and its operator-managed settings (docs/stations.md#station-settings).

/** The core's modules; features add theirs through settings.ts (`registerStationModule`). */
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
/**
 * The modules features add (registered in settings.ts), named here by declaration merging from a file in
 * the feature's folder, so `station.modules.<key>` and a route's `module` are typed everywhere:
 *
 *   declare module '…/stations/model.ts' { interface FeatureModules { inbox: true } }
 */
export interface FeatureModules {}
export type CoreModuleKey = (typeof MODULE_KEYS)[number];
export type ModuleKey = CoreModuleKey | (keyof FeatureModules & string);
export type Modules = Record<ModuleKey, boolean>;

export const PUSH_PROVIDERS = ['fcm', 'apns', 'expo'] as const;
export type PushProvider = (typeof PUSH_PROVIDERS)[number];

// This file owns the station's constants and types; schemas.ts builds its schemas from them (never the
// other way round, so the two never import each other).

/**
 * A stream entry's key: `^[a-z0-9][a-z0-9-]{0,31}$`, unique within the station
 * (docs/now-playing.md#heard-time-answers-in-the-listeners-time).
 */
export const STREAM_KEY_PATTERN = '^[a-z0-9][a-z0-9-]{0,31}$';
/** How far behind on-air time a stream's listeners hear, at most. */
export const MAX_LATENCY_SECONDS = 600;

/** The key a stream entry without one gets: `stream-{n}` by its 1-based position (stored at write time). */
export const defaultStreamKey = (index: number): string => `stream-${index + 1}`;

/**
 * The fields features add to each stream entry, every one present (registered in settings.ts). A feature
 * names its field's type here by declaration merging, from a file in its own folder:
 *
 *   declare module '…/stations/model.ts' { interface StreamEntryFields { stats: StreamStats } }
 */
export interface StreamEntryFields {}

/** A stream entry as the core knows it. */
export interface CoreStreamUrl {
  label: string | null;
  url: string;
  mime: string | null;
  bitrateKbps: number | null;
  key: string;
  latencySeconds: number;
}

export type StreamUrl = CoreStreamUrl & StreamEntryFields;

/** Up next (docs/now-playing.md#up-next): off by default, 1–5 items. */
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

/**
 * The station settings features contribute (registered in settings.ts), every key present. A feature
 * names its setting's type here by declaration merging, from a file in its own folder, so `Station`
 * stays typed without the core importing the feature:
 *
 *   declare module '…/stations/model.ts' { interface StationSettings { podcasts: Podcasts } }
 */
export interface StationSettings {}

/** The key of a feature's station setting. */
export type SettingKey = keyof StationSettings & string;

export interface Station extends StationSettings {
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
  createdAt: string;
  updatedAt: string;
}

/** The core modules' defaults (a feature's module default is registered with it: settings.ts `moduleDefaults`). */
export const DEFAULT_MODULES: Readonly<Record<CoreModuleKey, boolean>> = Object.freeze({
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
  created_at: Date;
  updated_at: Date;
  /** The features' setting columns (each names its own). */
  [column: string]: unknown;
}

/** Weather and traffic are delivered only when switched on, entitled and cleared for redistribution. */
export function delivers(station: Station, what: 'weather' | 'traffic'): boolean {
  return station.modules[what] && station.entitlements[what] && station.redistribution[what];
}

/** Whether listeners can reach the station at all (the first gate). */
export { isPublic };
