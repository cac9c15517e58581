import { adminErrorResponses, adminWrite } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { Type } from '../../http/schema.ts';
import { NotFoundError } from '../../lib/errors.ts';
import type { Feed } from './model.ts';
import { FeedSourceView, OpenMeteoSourceBody, TomTomSourceBody } from './sourceSchemas.ts';
import { deleteSource, findSourceView, saveSource, trafficSource, weatherSource } from './sources.ts';

// Operator routes for provider polling (docs/weather-traffic.md "Provider polling"): which third-party
// provider a worker polls for a station's weather or traffic, and how often.

const StationFeedParams = Type.Object({ stationId: Type.String({ minLength: 1, maxLength: 80 }) }, { additionalProperties: false });

const adminErrors = adminErrorResponses('Station (or source) not found.');

const admin = { ...adminWrite, params: StationFeedParams };

function readAndDelete(feed: Feed) {
  const path = `/admin/v1/stations/{stationId}/${feed}/source`;
  const Feed = feed === 'weather' ? 'Weather' : 'Traffic';
  return [
    defineRoute({
      ...admin,
      method: 'get',
      path,
      operationId: `adminGet${Feed}Source`,
      access: { scope: 'feeds:write' },
      summary: `The ${feed} provider source and its last poll (API keys are never shown)`,
      responses: { 200: { description: 'The source.', schema: FeedSourceView }, ...adminErrors },
      async handler({ svc, params }) {
        const view = await findSourceView(svc.db, (await svc.stations.require(params.stationId)).id, feed);
        if (!view) throw new NotFoundError(`No ${feed} source is configured.`);
        return view;
      },
    }),
    defineRoute({
      ...admin,
      method: 'delete',
      path,
      operationId: `adminDelete${Feed}Source`,
      access: { scope: 'feeds:write', action: `feeds.${feed}-source-delete` },
      summary: `Stop polling a ${feed} provider (stored data stays until replaced)`,
      responses: { 204: { description: 'Removed (also when there was none).' }, ...adminErrors },
      async handler({ ctx, svc, params }) {
        await deleteSource(svc.db, svc.jobs, (await svc.stations.require(params.stationId)).id, feed);
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
    access: { scope: 'feeds:write', action: 'feeds.weather-source-save' },
    summary: 'Poll Open-Meteo for the station’s weather (first poll at once, then every intervalSeconds)',
    body: OpenMeteoSourceBody,
    responses: { 200: { description: 'The source.', schema: FeedSourceView }, ...adminErrors },
    async handler({ svc, params, body }) {
      const source = weatherSource((await svc.stations.require(params.stationId)).id, body);
      return saveSource(svc.db, svc.jobs, source, svc.clock.now());
    },
  }),
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/traffic/source',
    operationId: 'adminPutTrafficSource',
    access: { scope: 'feeds:write', action: 'feeds.traffic-source-save' },
    summary: 'Poll TomTom Traffic Incident Details for the station’s traffic (first poll at once, then every intervalSeconds)',
    body: TomTomSourceBody,
    responses: { 200: { description: 'The source (without the API key).', schema: FeedSourceView }, ...adminErrors },
    async handler({ svc, params, body }) {
      const source = trafficSource((await svc.stations.require(params.stationId)).id, body);
      return saveSource(svc.db, svc.jobs, source, svc.clock.now());
    },
  }),
  ...readAndDelete('weather'),
  ...readAndDelete('traffic'),
];
