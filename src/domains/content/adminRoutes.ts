import { defineRoute } from '../../http/route.ts';
import { ErrorBody, Type } from '../../http/schema.ts';
import { NotFoundError } from '../../lib/errors.ts';
import type { Services } from '../../services.ts';
import { publishRecord, unpublishRecord } from './publish.ts';
import { deleteRecord, saveDraft } from './records.ts';
import { ContentTypeParams, PublishBody, PublishedReceipt, PutContentTypeBody, PutRecordBody, RecordParams, SavedContentType, SavedRecord } from './schemas.ts';
import { saveContentType } from './types.ts';

// The admin side the editorial system calls (decisions.md, "Admin API").

const adminErrors = {
  400: { description: 'Invalid input (VALIDATION_ERROR with issues).', schema: ErrorBody },
  401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
  404: { description: 'Station or record not found.', schema: ErrorBody },
};

const admin = { tags: ['admin'], surface: 'admin' as const };

async function stationIdOf(svc: Services, stationId: string): Promise<string> {
  const station = await svc.stations.byIdOrNull(stationId);
  if (!station) throw new NotFoundError('Station not found.');
  return station.id;
}

export const contentAdminRoutes = [
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/content-types/{key}',
    operationId: 'adminPutContentType',
    summary: 'Create or update a content type; a changed field list makes a new version',
    params: ContentTypeParams,
    body: PutContentTypeBody,
    responses: { 200: { description: 'The current version.', schema: SavedContentType }, ...adminErrors },
    async handler({ svc, params, body }) {
      const stationId = await stationIdOf(svc, params.stationId);
      return saveContentType(svc.db, { stationId, key: params.key, body, now: svc.clock.now() });
    },
  }),
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/records/{recordId}',
    operationId: 'adminPutRecord',
    summary: 'Save a draft revision of a record (validated against the type’s current version)',
    params: RecordParams,
    body: PutRecordBody,
    responses: { 200: { description: 'The draft revision.', schema: SavedRecord }, 409: { description: 'The id belongs to another station.', schema: ErrorBody }, ...adminErrors },
    async handler({ svc, params, body }) {
      const stationId = await stationIdOf(svc, params.stationId);
      return saveDraft(svc.db, { stationId, recordId: params.recordId, body, now: svc.clock.now() });
    },
  }),
  defineRoute({
    ...admin,
    method: 'post',
    path: '/admin/v1/stations/{stationId}/records/{recordId}/publish',
    operationId: 'adminPublishRecord',
    summary: 'Publish a revision (the latest when omitted); required fields are checked here',
    params: RecordParams,
    body: PublishBody,
    responses: { 200: { description: 'Published.', schema: PublishedReceipt }, 409: { description: 'No such revision (REVISION_CONFLICT).', schema: ErrorBody }, ...adminErrors },
    async handler({ svc, params, body }) {
      const stationId = await stationIdOf(svc, params.stationId);
      return publishRecord(svc, { stationId, recordId: params.recordId.toLowerCase(), revision: body.revision });
    },
  }),
  defineRoute({
    ...admin,
    method: 'post',
    path: '/admin/v1/stations/{stationId}/records/{recordId}/unpublish',
    operationId: 'adminUnpublishRecord',
    summary: 'Take a record off the listener side (effective on the next read)',
    params: RecordParams,
    responses: { 200: { description: 'Not delivered any more.', schema: Type.Object({ id: Type.String(), published: Type.Literal(false) }) }, ...adminErrors },
    async handler({ svc, params }) {
      const stationId = await stationIdOf(svc, params.stationId);
      return unpublishRecord(svc, { stationId, recordId: params.recordId.toLowerCase() });
    },
  }),
  defineRoute({
    ...admin,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/records/{recordId}',
    operationId: 'adminDeleteRecord',
    summary: 'Delete a record with its revisions and slugs',
    params: RecordParams,
    responses: { 204: { description: 'Deleted (also when it did not exist).' }, ...adminErrors },
    async handler({ ctx, svc, params }) {
      const stationId = await stationIdOf(svc, params.stationId);
      await deleteRecord(svc, stationId, params.recordId.toLowerCase());
      ctx.status = 204;
    },
  }),
];
