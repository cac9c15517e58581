import { defineRoute } from '../../http/route.ts';
import { ErrorBody, Type } from '../../http/schema.ts';
import { NotFoundError } from '../../lib/errors.ts';
import type { Services } from '../../services.ts';
import type { Feed } from './model.ts';
import { FeedSourceView, OpenMeteoSourceBody, TomTomSourceBody } from './sourceSchemas.ts';
import { deleteSource, findSourceView, saveSource, trafficSource, weatherSource } from './sources.ts';

// Operator routes for provider polling (docs/weather-traffic.md "Provider polling"): which third-party
// provider a worker polls for a station's weather or traffic, and how often.

const StationFeedParams = Type.Object({ stationId: Type.String({ minLength: 1, maxLength: 80 }) }, { additionalProperties: false });

const adminErrors = {
  400: { description: 'Invalid input (VALIDATION_ERROR with issues).', schema: ErrorBody },
  401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
  404: { description: 'Station (or source) not found.', schema: ErrorBody },
};

const admin = { tags: ['admin'], surface: 'admin' as const, params: StationFeedParams };

export async function stationIdOf(svc: Services, stationId: string): Promise<string> {
  const station = await svc.stations.byIdOrNull(stationId);
  if (!station) throw new NotFoundError('Station not found.');
  return station.id;
}

function readAndDelete(feed: Feed) {
  const path = `/admin/v1/stations/{stationId}/${feed}/source`;
  const Feed = feed === 'weather' ? 'Weather' : 'Traffic';
  return [
    defineRoute({
      ...admin,
      method: 'get',
      path,
      operationId: `adminGet${Feed}Source`,
      summary: `The ${feed} provider source and its last poll (API keys are never shown)`,
      responses: { 200: { description: 'The source.', schema: FeedSourceView }, ...adminErrors },
      async handler({ svc, params }) {
        const view = await findSourceView(svc.db, await stationIdOf(svc, params.stationId), feed);
        if (!view) throw new NotFoundError(`No ${feed} source is configured.`);
        return view;
      },
    }),
    defineRoute({
      ...admin,
      method: 'delete',
      path,
      operationId: `adminDelete${Feed}Source`,
      summary: `Stop polling a ${feed} provider (stored data stays until replaced)`,
      responses: { 204: { description: 'Removed (also when there was none).' }, ...adminErrors },
      async handler({ ctx, svc, params }) {
        await deleteSource(svc.db, svc.jobs, await stationIdOf(svc, params.stationId), feed);
        ctx.status = 204;
      },
    }),
  ];
}

export const sourceRoutes = [
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/weather/source',
    operationId: 'adminPutWeatherSource',
    summary: 'Poll Open-Meteo for the station’s weather (first poll at once, then every intervalSeconds)',
    body: OpenMeteoSourceBody,
    responses: { 200: { description: 'The source.', schema: FeedSourceView }, ...adminErrors },
    async handler({ svc, params, body }) {
      const source = weatherSource(await stationIdOf(svc, params.stationId), body);
      return saveSource(svc.db, svc.jobs, source, svc.clock.now());
    },
  }),
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/traffic/source',
    operationId: 'adminPutTrafficSource',
    summary: 'Poll TomTom Traffic Incident Details for the station’s traffic (first poll at once, then every intervalSeconds)',
    body: TomTomSourceBody,
    responses: { 200: { description: 'The source (without the API key).', schema: FeedSourceView }, ...adminErrors },
    async handler({ svc, params, body }) {
      const source = trafficSource(await stationIdOf(svc, params.stationId), body);
      return saveSource(svc.db, svc.jobs, source, svc.clock.now());
    },
  }),
  ...readAndDelete('weather'),
  ...readAndDelete('traffic'),
];
