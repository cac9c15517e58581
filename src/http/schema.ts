import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { UUID_PATTERN } from '../lib/ids.ts';

export { Type, type Static, type TSchema };

/** A string enum as JSON Schema `enum` (ajv reports allowed values, which feed suggestions). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const KEY_PATTERN = '^[a-z][a-z0-9_]{0,47}$';
export const SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$';

export const Uuid = Type.String({ pattern: UUID_PATTERN, description: 'UUID' });
export const Timestamp = Type.String({ description: 'ISO 8601 timestamp in UTC' });
export const LocalDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'local date YYYY-MM-DD' });

export const StationSlugParams = Type.Object(
  { stationSlug: Type.String({ minLength: 3, maxLength: 63, description: 'public station slug' }) },
  { additionalProperties: false },
);

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      requestId: Type.String(),
      issues: Type.Optional(
        Type.Array(
          Type.Object({
            path: Type.String(),
            message: Type.String(),
            code: Type.Optional(Type.String()),
            suggestion: Type.Optional(Type.Union([Type.String(), Type.Number()])),
          }),
        ),
      ),
    }),
  },
  { $id: 'ErrorBody' },
);

/** Ingest keeps the legacy error shape. */
export const LegacyErrorBody = Type.Object({ error: Type.String() });
