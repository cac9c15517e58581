import type { Context } from 'koa';
import { defineRoute } from '../../http/route.ts';
import { ErrorBody } from '../../http/schema.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { readOn } from '../../lib/replicas/routing.ts';
import type { WebServices as Services } from '../../services.ts';
import { createMediaVersion, discardFiles } from './commands.ts';
import { INLINE_BYTES, redirectToFile, sendFile } from './delivery.ts';
import { renderPublishedVariants } from './onDemand.ts';
import type { FileVariant } from './model.ts';
import { fileOpener, findAsset, findPublishedFile } from './queries.ts';
import { receiveUpload } from './receive.ts';
import { PublicMediaParams, PublicVariantParams, StationIdParams, UploadQuery, UploadReceipt } from './schemas.ts';
import { uploadMime } from './upload.ts';

// Admin upload and anonymous delivery of published media bytes (docs/media.md).

/** Media URLs name the station by id: 404 when it is unknown, inactive or public-offline. */
const bytesResponses = {
  200: { description: 'The whole file.', contentType: '*/*' },
  206: { description: 'One byte range (`Content-Range: bytes a-b/size`).', contentType: '*/*' },
  302: { description: 'With MEDIA_PUBLIC_BASE_URL: the file’s URL on the CDN or public bucket (`Location`), with the same `ETag`.' },
  304: { description: 'Not modified (If-None-Match matched the ETag).' },
  400: { description: 'Malformed version id or unknown variant.', schema: ErrorBody },
  404: {
    description:
      'Station unknown, inactive or offline; media module off (MODULE_DISABLED); version unknown, of another station, not published, or the variant does not exist.',
    schema: ErrorBody,
  },
  416: { description: 'The range starts past the end (`Content-Range: bytes */size`).', schema: ErrorBody },
  429: { description: 'Rate limited (per client IP).', schema: ErrorBody },
};

const publicMedia = {
  method: 'get' as const,
  tags: ['media'],
  surface: 'media' as const,
  module: 'media' as const,
  rateLimit: 'anonymous' as const,
  station: 'id' as const,
  // "The response is `private, no-store`": its errors too.
  cacheControl: 'private, no-store',
  description:
    'No credential. Only media of currently published records is served. `Cache-Control: private, no-store`; `Accept-Ranges`, `ETag` and `Content-Length` on every byte response. One `bytes=` range (`a-b`, `a-`, `-n`) gives 206; several give the whole file; `If-Range` (an ETag) and `If-None-Match` are honoured. HEAD answers like GET without the body.',
  responses: bytesResponses,
};

async function sendPublished(ctx: Context, svc: Services, stationId: string, versionId: string, variant: FileVariant): Promise<void> {
  const id = versionId.toLowerCase();
  const inlineUpTo = ctx.method === 'HEAD' ? -1 : INLINE_BYTES;
  // The published file's row is read where listener reads are routed (lib/replicas/routing.ts); a rendition made now is read back from the primary.
  let file = await readOn(svc, stationId, (on) => findPublishedFile(on.db, stationId, id, variant, inlineUpTo));
  // A rendition asked for before the worker stored it is rendered now (its path is already delivered).
  if (!file && variant !== 'original' && (await renderPublishedVariants(svc, stationId, id, variant)))
    file = await findPublishedFile(svc.db, stationId, id, variant, inlineUpTo);
  if (!file) throw new NotFoundError('Media not found.');
  // Behind a CDN (MEDIA_PUBLIC_BASE_URL) the bytes come from there, with the same ETag.
  const publicUrl = file.store && file.object_key ? await svc.media.publicUrl(file.store, file.object_key) : null;
  if (publicUrl) redirectToFile(ctx, file, publicUrl);
  else await sendFile(ctx, file, fileOpener(svc, file, id, variant, svc.logger));
}

export const mediaRoutes = [
  defineRoute({
    ...publicMedia,
    path: '/api/media/public/{stationId}/{versionId}',
    operationId: 'getPublishedMedia',
    summary: 'Bytes of a published media version (the original upload)',
    params: PublicMediaParams,
    async handler({ ctx, svc, station, params }) {
      await sendPublished(ctx, svc, station.id, params.versionId, 'original');
    },
  }),
  defineRoute({
    ...publicMedia,
    path: '/api/media/public/{stationId}/{versionId}/{variant}',
    operationId: 'getPublishedMediaVariant',
    summary: 'Bytes of an image rendition (thumb, display, card, square) of a published media version',
    params: PublicVariantParams,
    async handler({ ctx, svc, station, params }) {
      await sendPublished(ctx, svc, station.id, params.versionId, params.variant);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/admin/v1/stations/{stationId}/media',
    operationId: 'adminUploadMedia',
    access: { scope: 'content:write', action: 'content.media-upload' },
    summary: 'Upload a media file: a new asset, or with `assetId` a new version of one',
    description:
      'The body is the file’s raw bytes with their Content-Type: audio and video up to MEDIA_MAX_AUDIO_MIB (default 1 GiB), other files at most 50 MiB (413 past that, refused while streaming). The 201 comes once the bytes are durable in the media store. The kind follows the mime (image/*, audio/*, video/*, else file). Images must decode as the declared type (400 otherwise); their variants are rendered by a worker after the upload.',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    query: UploadQuery,
    // docs/media.md#upload writes the route as `?alt=&credits=&focalX=&focalY=&assetId=`: that literal template uploads.
    emptyQueryIsAbsent: true,
    bodyParser: 'none',
    rawBody: '*/*',
    responses: {
      201: { description: 'The stored version.', schema: UploadReceipt },
      400: {
        description: 'Invalid parameters, missing Content-Type, empty body, or bytes that do not decode as the declared image type.',
        schema: ErrorBody,
      },
      401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
      404: { description: 'Station or asset not found.', schema: ErrorBody },
      413: { description: 'Larger than the type’s limit (audio and video MEDIA_MAX_AUDIO_MIB, others 50 MiB).', schema: ErrorBody },
      503: {
        description: 'PROVIDER_UNAVAILABLE: the media store cannot be reached; nothing was stored; retry after `Retry-After` seconds.',
        schema: ErrorBody,
      },
      415: { description: 'A form instead of raw bytes, a Content-Encoding, or an image type that cannot be rendered.', schema: ErrorBody },
    },
    async handler({ ctx, svc, params, query }) {
      const station = await svc.stations.require(params.stationId);
      const mime = uploadMime(ctx.get('content-type'), ctx.get('content-encoding'));
      // Known before the bytes arrive: refuse an unknown asset without reading the upload first.
      const assetId = query.assetId?.toLowerCase();
      if (assetId && !(await findAsset(svc.db, station.id, assetId))) throw new NotFoundError('Media asset not found.');
      const upload = await receiveUpload(svc, ctx.req, mime);
      try {
        const receipt = await createMediaVersion(svc, {
          stationId: station.id,
          assetId,
          mime,
          alt: query.alt,
          credits: query.credits,
          focalX: query.focalX,
          focalY: query.focalY,
          ...upload,
        });
        ctx.status = 201;
        return receipt;
      } catch (err) {
        await discardFiles(svc, [upload.file]);
        throw err;
      }
    },
  }),
];
