import { Type, StringEnum, Nullable, Timestamp, Uuid } from '../../http/schema.ts';
import { OPERATOR_SCOPES } from '../../lib/operatorScopes.ts';

export const OperatorKeyParams = Type.Object({ keyId: Uuid }, { additionalProperties: false });

const Stations = Type.Union(
  [Type.Array(Type.String({ minLength: 1, maxLength: 80 }), { minItems: 1, maxItems: 1000, uniqueItems: true }), Type.Literal('*')],
  {
    description: 'The station ids the key may reach, or "*" for every station (present and future).',
  },
);

export const CreateOperatorKeyBody = Type.Object(
  {
    label: Type.String({ minLength: 1, maxLength: 100 }),
    stations: Stations,
    scopes: Type.Array(StringEnum(OPERATOR_SCOPES), { minItems: 1, maxItems: OPERATOR_SCOPES.length, uniqueItems: true }),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'at most two years ahead; default two years' })),
  },
  { additionalProperties: false },
);

const keyFields = {
  id: Type.String(),
  label: Type.String(),
  stations: Type.Union([Type.Array(Type.String()), Type.Literal('*')]),
  scopes: Type.Array(Type.String()),
  expiresAt: Timestamp,
  createdAt: Timestamp,
};

export const CreatedOperatorKey = Type.Object({
  ...keyFields,
  key: Type.String({ description: 'The secret (`wvo_` + 40 base62 characters), shown only once.' }),
});

export const OperatorKeyView = Type.Object({
  ...keyFields,
  lastUsedAt: Nullable(Timestamp),
  rotatedAt: Nullable(Timestamp),
});
