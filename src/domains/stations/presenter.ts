import type { Config } from '../../config.ts';
import { stationChannel } from '../../feed/names.ts';
import { delivers, type ModuleKey, type Station } from './model.ts';
import type { StationDocument } from './schemas.ts';
import { stationSettings } from './settings.ts';

export const CONTRACT_VERSION = 1 as const;
export const POLL_INTERVAL_SECONDS = 30;

/** Listener path of each resource, relative to the station base path. */
const RESOURCE_PATHS: Array<[key: Exclude<keyof StationDocument['resources'], 'realtime' | 'media'>, module: ModuleKey, path: string]> = [
  ['schemas', 'schemas', '/schemas'],
  ['content', 'content', '/content'],
  ['schedule', 'schedule', '/schedule'],
  ['programs', 'programs', '/programs'],
  ['currentBroadcast', 'currentBroadcast', '/broadcast/current'],
  ['nowPlaying', 'nowPlaying', '/now-playing'],
  ['trackHistory', 'trackHistory', '/track-history'],
  ['weather', 'weather', '/weather'],
  ['traffic', 'traffic', '/traffic'],
  ['calendar', 'calendar', '/schedule.ics'],
  ['graphql', 'graphql', '/graphql'],
];

export const stationBasePath = (slug: string): string => `/api/v1/stations/${slug}`;
export const mediaBasePath = (stationId: string): string => `/api/media/public/${stationId}/`;

/**
 * `{url, channel, sse}`, or null when realtime is off. `sse` is the Server-Sent Events URL of the same
 * channel on the same gateway: REALTIME_PUBLIC_URL with `ws:`/`wss:` read as `http:`/`https:`.
 */
export function realtimeResource(station: Station, config: Pick<Config, 'realtimePublicUrl'>) {
  if (!station.modules.realtime) return null;
  const channel = stationChannel(station.id);
  const query = `?channels[]=${encodeURIComponent(channel)}`;
  const http = config.realtimePublicUrl.replace(/^ws(s?):/, 'http$1:');
  return { url: `${config.realtimePublicUrl}/v1/realtime${query}`, channel, sse: `${http}/v1/realtime/sse${query}` };
}

export function presentStationDocument(station: Station, config: Pick<Config, 'realtimePublicUrl' | 'publicBaseUrl'>): StationDocument {
  const base = stationBasePath(station.slug);
  const resources = {} as Record<string, unknown>;
  for (const [key, module, path] of RESOURCE_PATHS) {
    const on = key === 'weather' || key === 'traffic' ? delivers(station, key) : station.modules[module];
    resources[key] = on ? base + path : null;
  }
  resources.media = station.modules.media ? mediaBasePath(station.id) : null;
  // The features' links (podcasts' `podcast`), between `media` and `realtime` as the schema lists them.
  for (const { resource } of stationSettings()) if (resource) resources[resource.name] = resource.present(station, config);
  resources.realtime = realtimeResource(station, config);
  return {
    contractVersion: CONTRACT_VERSION,
    id: station.id,
    slug: station.slug,
    name: station.name,
    timezone: station.timezone,
    profile: station.profile,
    resources: resources as StationDocument['resources'],
    delivery: { pollIntervalSeconds: POLL_INTERVAL_SECONDS },
  };
}

/** The admin view: the station with every setting. */
export const presentAdminStation = (station: Station) => station;
