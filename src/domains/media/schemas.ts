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
