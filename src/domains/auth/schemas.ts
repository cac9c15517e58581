import { Type, StringEnum, Uuid, Nullable } from '../../http/schema.ts';
import { SCOPES } from './model.ts';

export const CredentialParams = Type.Object(
  { stationId: Type.String({ minLength: 1, maxLength: 80 }), credentialId: Uuid },
  { additionalProperties: false },
);

export const CreateCredentialBody = Type.Object(
  {
    scopes: Type.Array(StringEnum(SCOPES), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
    label: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'at most one year ahead; default one year' })),
  },
  { additionalProperties: false },
);

export const CreatedCredential = Type.Object({
  id: Type.String(),
  token: Type.String({ description: 'The secret, shown once.' }),
  scopes: Type.Array(Type.String()),
  expiresAt: Type.String(),
  label: Nullable(Type.String()),
});

export const CredentialView = Type.Object({
  id: Type.String(),
  stationId: Type.String(),
  label: Nullable(Type.String()),
  scopes: Type.Array(Type.String()),
  expiresAt: Type.String(),
  revokedAt: Nullable(Type.String()),
  lastUsedAt: Nullable(Type.String()),
  createdAt: Type.String(),
});
