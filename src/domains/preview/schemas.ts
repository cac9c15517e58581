import { Type, Uuid, Nullable, type Static } from '../../http/schema.ts';

export const PreviewGrantBody = Type.Object(
  { recordId: Uuid, audience: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))) },
  { additionalProperties: false },
);

export const PreviewGrant = Type.Object({
  grant: Type.String({ description: 'send as X-Preview-Grant; valid 15 minutes' }),
  expiresAt: Type.String(),
});

export const PreviewRequestBody = Type.Object(
  {
    stationId: Type.String({ minLength: 1, maxLength: 80 }),
    recordId: Uuid,
    revision: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    audience: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  },
  { additionalProperties: false },
);

export const EditorialPreview = Type.Object({
  revision: Type.Integer(),
  values: Type.Record(Type.String(), Type.Unknown()),
  document: Type.Unknown(),
  media: Type.Array(Type.Unknown()),
});
export type EditorialPreview = Static<typeof EditorialPreview>;
