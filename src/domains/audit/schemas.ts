import { Type, Nullable, Timestamp } from '../../http/schema.ts';

export const AuditQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after (ISO 8601)' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'entries before (ISO 8601)' })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, examples: ['content.publish'] })),
    keyId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'an operator key id, or "root"' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const AuditEntryView = Type.Object({
  id: Type.String(),
  at: Timestamp,
  keyId: Type.String({ description: '"root" for the root key' }),
  keyLabel: Type.String(),
  method: Type.String(),
  path: Type.String({ description: 'without the query string' }),
  stationId: Nullable(Type.String()),
  action: Type.String(),
  target: Nullable(Type.String()),
  status: Type.Integer(),
  requestId: Type.String(),
  clientIp: Type.String(),
});

export const AuditPage = Type.Object({ entries: Type.Array(AuditEntryView), nextCursor: Nullable(Type.String()) });
