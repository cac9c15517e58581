import { defineRoute } from '../../http/route.ts';
import { ErrorBody } from '../../http/schema.ts';
import { completeUpload, createUpload, receiveUploadBytes } from './uploads.ts';
import {
  StationIdParams,
  UploadBytesParams,
  UploadBytesQuery,
  UploadGrant,
  UploadGrantBody,
  UploadParams,
  UploadReceipt,
} from './schemas.ts';

// Pre-signed uploads (docs/media.md, "Large uploads from a browser or a CMS").

export const uploadRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/v1/stations/{stationId}/media/uploads',
    operationId: 'adminCreateMediaUpload',
    access: { scope: 'content:write', action: 'content.media-upload-create' },
    summary: 'Announce a large upload: a URL to PUT the bytes to, valid one hour',
    description:
      'Answers a pre-signed URL of the store (S3), or a Waveline URL carrying a capability token (the other stores), taking the file’s bytes by PUT with the given headers. Then `POST …/media/uploads/{uploadId}/complete`.',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    body: UploadGrantBody,
    responses: {
      201: { description: 'Where and how to send the bytes, and until when.', schema: UploadGrant },
      400: { description: 'Invalid body (mime, bytes, sha256, alt, credits, assetId).', schema: ErrorBody },
      401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
      404: { description: 'Station or asset not found.', schema: ErrorBody },
      413: {
        description: '`bytes` is over the limit of the type (audio and video MEDIA_MAX_AUDIO_MIB, others 50 MiB).',
        schema: ErrorBody,
      },
    },
    async handler({ ctx, svc, params, body }) {
      const station = await svc.stations.require(params.stationId);
      const grant = await createUpload(svc, station.id, body);
      ctx.status = 201;
      return grant;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/admin/v1/stations/{stationId}/media/uploads/{uploadId}/complete',
    operationId: 'adminCompleteMediaUpload',
    access: { scope: 'content:write', action: 'content.media-upload' },
    summary: 'Complete an upload: checks size, type and SHA-256, then stores the version',
    description:
      'Answers as the direct upload does. A size, type or digest that does not match is 400 naming `bytes`, `mime` or `sha256`, and nothing is kept. A second completion answers the same 201 (no second version).',
    tags: ['admin'],
    surface: 'admin',
    params: UploadParams,
    responses: {
      201: { description: 'The stored version.', schema: UploadReceipt },
      400: { description: 'The received file does not match what was announced (issues name bytes, mime or sha256).', schema: ErrorBody },
      401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
      404: { description: 'Unknown, expired or another station’s upload.', schema: ErrorBody },
      503: {
        description: 'PROVIDER_UNAVAILABLE: the media store cannot be reached; retry after `Retry-After` seconds.',
        schema: ErrorBody,
      },
    },
    async handler({ ctx, svc, params }) {
      const station = await svc.stations.require(params.stationId);
      const receipt = await completeUpload(svc, station.id, params.uploadId);
      ctx.status = 201;
      return receipt;
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/media/uploads/{uploadId}',
    operationId: 'putMediaUploadBytes',
    summary: 'The bytes of an announced upload (the URL is the capability: no operator key)',
    description:
      'Used with the postgres and filesystem stores (S3 takes the bytes at its own pre-signed URL). The body is the file’s raw bytes; more than announced is 413.',
    tags: ['media'],
    surface: 'media',
    params: UploadBytesParams,
    query: UploadBytesQuery,
    bodyParser: 'none',
    rawBody: '*/*',
    responses: {
      204: { description: 'Stored; complete the upload next.' },
      404: { description: 'Unknown or expired upload, or a wrong token.', schema: ErrorBody },
      413: { description: 'More bytes than announced.', schema: ErrorBody },
      503: {
        description: 'PROVIDER_UNAVAILABLE: the media store cannot be reached; retry after `Retry-After` seconds.',
        schema: ErrorBody,
      },
    },
    async handler({ ctx, svc, params, query }) {
      await receiveUploadBytes(svc, params.uploadId, query.token, ctx.req);
      ctx.status = 204;
    },
  }),
];
