import { Nullable, StringEnum, Type, Uuid, type Static } from '../../http/schema.ts';
import { MEDIA_KINDS, MEDIA_VARIANTS, SQUARE_VARIANTS } from './model.ts';

export { StationIdParams } from '../stations/schemas.ts';

export const UploadQuery = Type.Object(
  {
    alt: Type.Optional(Type.String({ maxLength: 1000, description: 'alternative text (default empty)' })),
    credits: Type.Optional(Type.String({ maxLength: 1000, description: 'credit line (default empty)' })),
    focalX: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'focal point, 0 (left) to 1 (right); default the asset’s, else 0.5' }),
    ),
    focalY: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'focal point, 0 (top) to 1 (bottom); default the asset’s, else 0.5' }),
    ),
    assetId: Type.Optional({ ...Uuid, description: 'an existing asset of the station: the upload becomes its new version' }),
  },
  { additionalProperties: false },
);
export type UploadQuery = Static<typeof UploadQuery>;

export const UploadReceipt = Type.Object({
  assetId: Type.String(),
  versionId: Type.String(),
  kind: StringEnum(MEDIA_KINDS),
  mime: Type.String(),
  width: Nullable(Type.Integer()),
  height: Nullable(Type.Integer()),
  duration: Nullable(Type.Number({ description: 'seconds, for audio whose length can be read from its headers (WAV, MP3, FLAC)' })),
});
export type UploadReceipt = Static<typeof UploadReceipt>;

const StationId = Type.String({ minLength: 1, maxLength: 80, description: 'station id (not the slug)' });
const VersionId = { ...Uuid, description: 'media version id (not the asset id)' };

export const PublicMediaParams = Type.Object({ stationId: StationId, versionId: VersionId }, { additionalProperties: false });

export const PublicVariantParams = Type.Object(
  {
    stationId: StationId,
    versionId: VersionId,
    variant: StringEnum([...MEDIA_VARIANTS, ...SQUARE_VARIANTS], {
      description: 'rendition (300, 600 and 1200 are the square JPEG renditions of artwork and show images)',
    }),
  },
  { additionalProperties: false },
);

export const UploadGrantBody = Type.Object(
  {
    mime: Type.String({ minLength: 3, maxLength: 255, description: 'media type of the file, e.g. audio/mpeg' }),
    bytes: Type.Integer({
      minimum: 1,
      description: 'exact size of the file in bytes (audio and video up to MEDIA_MAX_AUDIO_MIB, others 50 MiB)',
    }),
    sha256: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'hex SHA-256 of the file: checked by the completion' })),
    alt: Type.Optional(Type.String({ maxLength: 1000, description: 'alternative text (default empty)' })),
    credits: Type.Optional(Type.String({ maxLength: 1000, description: 'credit line (default empty)' })),
    assetId: Type.Optional({ ...Uuid, description: 'an existing asset of the station: the upload becomes its new version' }),
  },
  { additionalProperties: false },
);
export type UploadGrantBody = Static<typeof UploadGrantBody>;

export const UploadGrant = Type.Object({
  uploadId: Type.String(),
  url: Type.String({ description: 'where to send the bytes: pre-signed on S3, else a Waveline URL (a capability: no operator key)' }),
  method: Type.Literal('PUT'),
  headers: Type.Record(Type.String(), Type.String(), { description: 'headers the byte request must carry' }),
  expiresAt: Type.String({ format: 'date-time', description: 'one hour after creation' }),
});

export const UploadParams = Type.Object({ stationId: StationId, uploadId: Uuid }, { additionalProperties: false });
export const UploadBytesParams = Type.Object({ uploadId: Uuid }, { additionalProperties: false });
export const UploadBytesQuery = Type.Object(
  { token: Type.String({ minLength: 20, maxLength: 100, description: 'the capability the upload URL carries' }) },
  { additionalProperties: false },
);
