import { listenerErrorResponses, adminErrorResponses, listenerRead } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { Representation } from '../../lib/readCache.ts';
import { ValidationError } from '../../lib/errors.ts';
import { ErrorBody } from '../../http/schema.ts';
import { createStation, updateStation } from './commands.ts';
import { stationChanged } from './changes.ts';
import { presentAdminStation, presentStationDocument } from './presenter.ts';
import { AdminStation, CreateStationBody, PatchStationBody, StationDocument, StationIdParams, StationSlugParams } from './schemas.ts';

const listenerErrors = listenerErrorResponses('Station unknown, inactive or offline.');

const adminErrors = adminErrorResponses('Station not found.');

export const stationRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/v1/stations/{stationSlug}',
    operationId: 'getStation',
    summary: 'The station entry document',
    ...listenerRead,
    params: StationSlugParams,
    responses: { 200: { description: 'The station document.', schema: StationDocument }, ...listenerErrors },
    // Kept as bytes in the read cache like every listener read; only a change of the station drops it.
    cache: 'station',
    handler({ svc, station }) {
      return Representation.json(presentStationDocument(station, svc.config));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/admin/v1/stations',
    operationId: 'adminCreateStation',
    access: { scope: 'root', action: 'station.create' },
    summary: 'Create a station',
    tags: ['admin'],
    surface: 'admin',
    body: CreateStationBody,
    responses: {
      201: { description: 'The station (admin view).', schema: AdminStation },
      409: { description: 'Slug or id taken.', schema: ErrorBody },
      ...adminErrors,
    },
    async handler({ ctx, svc, body }) {
      const change = await createStation(svc.db, svc.invalidation, body, svc.clock.now());
      await stationChanged(svc, change);
      ctx.status = 201;
      return presentAdminStation(change.after);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/admin/v1/stations/{stationId}',
    operationId: 'adminGetStation',
    access: { scope: 'stations:write' },
    summary: 'Read a station with its settings',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    responses: { 200: { description: 'The station (admin view).', schema: AdminStation }, ...adminErrors },
    async handler({ svc, params }) {
      const station = await svc.stations.require(params.stationId);
      return presentAdminStation(station);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/admin/v1/stations/{stationId}',
    operationId: 'adminUpdateStation',
    access: { scope: 'stations:write', action: 'station.update' },
    summary: 'Change a station’s name, slug, time zone or settings',
    description:
      'Only the fields sent change; profile, modules, entitlements and redistribution merge into what is stored. The same PATCH again writes nothing (`updatedAt` stays).',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    body: PatchStationBody,
    responses: {
      200: { description: 'The station (admin view).', schema: AdminStation },
      409: { description: 'Slug taken.', schema: ErrorBody },
      ...adminErrors,
    },
    async handler({ svc, params, body }) {
      const { id, ...changes } = body;
      if (id !== undefined && id !== params.stationId)
        throw new ValidationError('Invalid request body.', [
          { path: 'id', code: 'invalid_value', message: 'id cannot change; send the station’s own id or leave it out' },
        ]);
      const change = await updateStation(svc.db, svc.invalidation, params.stationId, changes, svc.clock.now());
      // What follows a change (a new logo's renditions, the on-air row's `upNext`) is the features' own.
      await stationChanged(svc, change);
      return presentAdminStation(change.after);
    },
  }),
];
