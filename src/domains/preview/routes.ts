import { defineRoute } from '../../http/route.ts';
import { ErrorBody } from '../../http/schema.ts';
import { NotFoundError, UnauthenticatedError } from '../../lib/errors.ts';
import { StationIdParams } from '../stations/schemas.ts';
import { grantAllows, issueGrant } from './grants.ts';
import { findRecord, previewRevision } from './queries.ts';
import { EditorialPreview, PreviewGrant, PreviewGrantBody, PreviewRequestBody } from './schemas.ts';

export const previewRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/v1/stations/{stationId}/preview-grants',
    operationId: 'adminCreatePreviewGrant',
    access: { scope: 'content:write', action: 'content.preview-grant' },
    summary: 'Issue a 15-minute editorial preview grant for one record',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    body: PreviewGrantBody,
    responses: {
      201: { description: 'The grant.', schema: PreviewGrant },
      400: { description: 'Invalid input.', schema: ErrorBody },
      401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
      404: { description: 'Station, or record of this station, not found.', schema: ErrorBody },
    },
    async handler({ ctx, svc, params, body }) {
      const station = await svc.stations.byIdOrNull(params.stationId);
      if (!station || !(await findRecord(svc.db, station.id, body.recordId))) throw new NotFoundError('Record not found.');
      ctx.status = 201;
      return issueGrant(svc.config.secret, {
        stationId: station.id,
        recordId: body.recordId.toLowerCase(),
        audience: body.audience ?? null,
        now: svc.clock.now(),
      });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/preview/editorial',
    operationId: 'previewEditorial',
    summary: 'Editorial preview of a record revision (REST counterpart of the previewEditorial mutation)',
    description:
      'Needs `Authorization: Bearer` (listener:read of the station) and `X-Preview-Grant`. Returns `{revision, values, document, media}` of the given revision, draft or published (the latest draft when omitted). Previews never appear on the realtime feed.',
    tags: ['listener'],
    surface: 'system',
    station: 'body',
    scope: 'listener:read',
    body: PreviewRequestBody,
    responses: {
      200: { description: 'The preview.', schema: EditorialPreview },
      400: { description: 'Invalid body.', schema: ErrorBody },
      401: { description: 'Missing credential or grant, or a grant for another record, station or expired.', schema: ErrorBody },
      404: { description: 'Station or record not found.', schema: ErrorBody },
    },
    async handler({ ctx, svc, station, body }) {
      if (!grantAllows(svc.config.secret, ctx.get('x-preview-grant') || undefined, station.id, body.recordId, svc.clock.now())) {
        throw new UnauthenticatedError('A valid preview grant for this record is needed.');
      }
      return previewRevision(svc.db, station.id, body.recordId, body.revision);
    },
  }),
];
