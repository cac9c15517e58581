import { listenerErrorResponses, adminErrorResponses, listenerRead } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { feedRead } from './reads.ts';
import { invalidateReads } from '../../lib/readCache.ts';
import { StationSlugParams } from '../../http/schema.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { StationIdParams } from '../stations/schemas.ts';
import type { Station } from '../stations/model.ts';
import type { Feed } from './model.ts';
import { storeTraffic, storeWeather } from './commands.ts';
import { sourceRoutes } from './sourceRoutes.ts';
import { PutTrafficBody, PutWeatherBody, StoredReceipt, TrafficResponse, WeatherResponse } from './schemas.ts';

// Weather and traffic: listener reads (docs/weather-traffic.md#listener-reads) and the admin
// PUTs an external collector stores through (docs/weather-traffic.md#admin-api-operator-token).

const listener = { ...listenerRead, params: StationSlugParams };

const listenerErrors = listenerErrorResponses(
  'Station unknown, inactive or offline (NOT_FOUND); module switched off (MODULE_DISABLED); not entitled or no redistribution permission recorded (NOT_FOUND).',
);

const adminErrors = adminErrorResponses('Station not found.');

/**
 * The module gate already answered MODULE_DISABLED; a station without the entitlement or the recorded
 * redistribution permission gets a plain NOT_FOUND (the resource does not exist for it).
 */
function assertDelivered(station: Station, feed: Feed): void {
  if (!station.entitlements[feed] || !station.redistribution[feed]) throw new NotFoundError(`No ${feed} is available for this station.`);
}

export const weatherRoutes = [
  defineRoute({
    ...listener,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/weather',
    operationId: 'getWeather',
    summary: 'Normalised weather snapshots with freshness',
    description:
      'Fresh while the snapshot is at most 3600 s old (by observedAt). `empty` freshness with `snapshots: []` until a snapshot was stored.',
    module: 'weather',
    cache: 'weather',
    responses: { 200: { description: 'Weather.', schema: WeatherResponse }, ...listenerErrors },
    handler({ svc, station }) {
      assertDelivered(station, 'weather');
      return feedRead(svc, station, 'weather');
    },
  }),
  defineRoute({
    ...listener,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/traffic',
    operationId: 'getTraffic',
    summary: 'Normalised traffic snapshot with incidents and freshness',
    description:
      'Fresh while the snapshot is at most 900 s old (by observedAt); an empty `incidents` array with `fresh` means no incidents. `empty` freshness with `snapshot: null` until a snapshot was stored.',
    module: 'traffic',
    cache: 'traffic',
    responses: { 200: { description: 'Traffic.', schema: TrafficResponse }, ...listenerErrors },
    handler({ svc, station }) {
      assertDelivered(station, 'traffic');
      return feedRead(svc, station, 'traffic');
    },
  }),
  defineRoute({
    method: 'put',
    path: '/admin/v1/stations/{stationId}/weather',
    operationId: 'adminPutWeather',
    access: { scope: 'feeds:write', action: 'feeds.weather' },
    summary: 'Store the station’s normalised weather snapshots (replaces the previous ones)',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    body: PutWeatherBody,
    bodyLimit: '4mb',
    responses: { 200: { description: 'Stored.', schema: StoredReceipt }, ...adminErrors },
    async handler({ svc, params, body }) {
      const stationId = (await svc.stations.require(params.stationId)).id;
      const receipt = await storeWeather(svc.db, { stationId, body, now: svc.clock.now() });
      await invalidateReads(svc, stationId, 'weather');
      return receipt;
    },
  }),
  defineRoute({
    method: 'put',
    path: '/admin/v1/stations/{stationId}/traffic',
    operationId: 'adminPutTraffic',
    access: { scope: 'feeds:write', action: 'feeds.traffic' },
    summary: 'Store the station’s normalised traffic snapshot (replaces the previous one)',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    body: PutTrafficBody,
    bodyLimit: '4mb',
    responses: { 200: { description: 'Stored.', schema: StoredReceipt }, ...adminErrors },
    async handler({ svc, params, body }) {
      const stationId = (await svc.stations.require(params.stationId)).id;
      const receipt = await storeTraffic(svc.db, { stationId, body, now: svc.clock.now() });
      await invalidateReads(svc, stationId, 'traffic');
      return receipt;
    },
  }),
  ...sourceRoutes,
];
