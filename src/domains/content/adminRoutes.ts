import { adminErrorResponses, adminWrite } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { ErrorBody, Type } from '../../http/schema.ts';
import { publishRecord, unpublishRecord } from './publish.ts';
import { deleteRecord, saveDraft } from './records.ts';
import {
  ContentTypeParams,
  PublishBody,
  PublishedReceipt,
  PutContentTypeBody,
  PutRecordBody,
  RecordParams,
  SavedContentType,
  SavedRecord,
} from './schemas.ts';
import { saveContentType } from './types.ts';
import { invalidateReads } from '../../lib/readCache.ts';
import { notifyOnPublish } from '../push/notifications/publishTrigger.ts';

// The admin side the editorial system calls (docs/content.md#how-a-record-reaches-listeners).

const adminErrors = adminErrorResponses('Station or record not found.');

const admin = adminWrite;

export const contentAdminRoutes = [
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/content-types/{key}',
    operationId: 'adminPutContentType',
    access: { scope: 'content:write', action: 'content.type-save' },
    summary: 'Create or update a content type; a changed field list makes a new version',
    params: ContentTypeParams,
    body: PutContentTypeBody,
    responses: { 200: { description: 'The current version.', schema: SavedContentType }, ...adminErrors },
    async handler({ svc, params, body }) {
      const stationId = (await svc.stations.require(params.stationId)).id;
      const saved = await saveContentType(svc.db, { stationId, key: params.key, body, now: svc.clock.now() });
      await invalidateReads(svc, stationId, 'content');
      return saved;
    },
  }),
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/records/{recordId}',
    operationId: 'adminPutRecord',
    access: { scope: 'content:write', action: 'content.save' },
    summary: 'Save a draft revision of a record (validated against the type’s current version)',
    params: RecordParams,
    body: PutRecordBody,
    responses: {
      200: { description: 'The draft revision.', schema: SavedRecord },
      409: { description: 'The id belongs to another station.', schema: ErrorBody },
      ...adminErrors,
    },
    async handler({ svc, params, body }) {
      const stationId = (await svc.stations.require(params.stationId)).id;
      return saveDraft(svc.db, { stationId, recordId: params.recordId, body, now: svc.clock.now() });
    },
  }),
  defineRoute({
    ...admin,
    method: 'post',
    path: '/admin/v1/stations/{stationId}/records/{recordId}/publish',
    operationId: 'adminPublishRecord',
    access: { scope: 'content:write', action: 'content.publish' },
    summary: 'Publish a revision (the latest when omitted); required fields are checked here',
    params: RecordParams,
    body: PublishBody,
    responses: {
      200: {
        description:
          'Published. With `notify`, `notificationId` names the content notification of this revision (once per revision), or null when push is not configured.',
        schema: PublishedReceipt,
      },
      409: { description: 'No such revision (REVISION_CONFLICT).', schema: ErrorBody },
      ...adminErrors,
    },
    async handler({ svc, params, body }) {
      const station = await svc.stations.require(params.stationId);
      const receipt = await publishRecord(svc, { stationId: station.id, recordId: params.recordId.toLowerCase(), revision: body.revision });
      if (!body.notify) return receipt;
      return { ...receipt, notificationId: await notifyOnPublish(svc, station, receipt, body.notify) };
    },
  }),
  defineRoute({
    ...admin,
    method: 'post',
    path: '/admin/v1/stations/{stationId}/records/{recordId}/unpublish',
    operationId: 'adminUnpublishRecord',
    access: { scope: 'content:write', action: 'content.unpublish' },
    summary: 'Take a record off the listener side (effective on the next read)',
    params: RecordParams,
    responses: {
      200: { description: 'Not delivered any more.', schema: Type.Object({ id: Type.String(), published: Type.Literal(false) }) },
      ...adminErrors,
    },
    async handler({ svc, params }) {
      const stationId = (await svc.stations.require(params.stationId)).id;
      return unpublishRecord(svc, { stationId, recordId: params.recordId.toLowerCase() });
    },
  }),
  defineRoute({
    ...admin,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/records/{recordId}',
    operationId: 'adminDeleteRecord',
    access: { scope: 'content:write', action: 'content.delete' },
    summary: 'Delete a record with its revisions and slugs',
    params: RecordParams,
    responses: { 204: { description: 'Deleted (also when it did not exist).' }, ...adminErrors },
    async handler({ ctx, svc, params }) {
      const stationId = (await svc.stations.require(params.stationId)).id;
      await deleteRecord(svc, stationId, params.recordId.toLowerCase());
      ctx.status = 204;
    },
  }),
];
