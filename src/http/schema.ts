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

export const Uuid = Type.String({ pattern: UUID_PATTERN, description: 'UUID', examples: ['0b6f6d2e-3c1a-4f5e-9a77-2d4c8e1f0a93'] });
export const Timestamp = Type.String({ description: 'ISO 8601 timestamp in UTC', examples: ['2026-11-21T10:15:02.123Z'] });
export const LocalDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'local date YYYY-MM-DD', examples: ['2026-11-21'] });

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
  { $id: 'ErrorBody', title: 'Error' },
);

/** Ingest keeps the legacy error shape. */
export const LegacyErrorBody = Type.Object({ error: Type.String() }, { title: 'LegacyError' });
