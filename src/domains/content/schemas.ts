import type { TSchema } from '@sinclair/typebox';
import { Type, Nullable, StringEnum, KEY_PATTERN, Uuid, Timestamp, StationSlugParams, type Static } from '../../http/schema.ts';
import { FIELD_KINDS } from './model.ts';
import { PublishNotify } from '../push/notifications/schemas.ts';

// One schema per route input and output: ajv validates with them, OpenAPI documents them.

export const Key = Type.String({ pattern: KEY_PATTERN, description: 'key matching ^[a-z][a-z0-9_]{0,47}$' });
const Label = Type.String({ minLength: 1, maxLength: 200 });

/** Deepest nesting of `group` fields (a group in a group in a group). */
export const MAX_FIELD_DEPTH = 3;
export const MAX_FIELDS = 100;

// Built to a fixed depth instead of a recursive $ref so the OpenAPI document stays self-contained.
function fieldDefinitionInput(depth: number): TSchema {
  return Type.Object(
    {
      key: Key,
      label: Label,
      kind: StringEnum(FIELD_KINDS),
      required: Type.Optional(Type.Boolean()),
      private: Type.Optional(Type.Boolean({ description: 'never delivered to listeners' })),
      system: Type.Optional(Type.Boolean({ description: 'system metadata; never delivered to listeners' })),
      maxLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
      min: Type.Optional(Type.Number()),
      max: Type.Optional(Type.Number()),
      choices: Type.Optional(
        Type.Array(Type.Object({ key: Key, label: Label }, { additionalProperties: false }), { minItems: 1, maxItems: 500 }),
      ),
      multiple: Type.Optional(Type.Boolean()),
      targetType: Type.Optional(Key),
      maxItems: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      ...(depth > 1 ? { fields: Type.Optional(Type.Array(fieldDefinitionInput(depth - 1), { minItems: 1, maxItems: MAX_FIELDS })) } : {}),
    },
    { additionalProperties: false },
  );
}

export interface FieldDefinitionInput {
  key: string;
  label: string;
  kind: (typeof FIELD_KINDS)[number];
  required?: boolean;
  private?: boolean;
  system?: boolean;
  maxLength?: number;
  min?: number;
  max?: number;
  choices?: Array<{ key: string; label: string }>;
  multiple?: boolean;
  targetType?: string;
  maxItems?: number;
  fields?: FieldDefinitionInput[];
}

export const PutContentTypeBody = Type.Object(
  {
    label: Label,
    fields: Type.Array(Type.Unsafe<FieldDefinitionInput>(fieldDefinitionInput(MAX_FIELD_DEPTH)), { maxItems: MAX_FIELDS }),
    archived: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type PutContentTypeBody = Static<typeof PutContentTypeBody>;

export const ContentTypeParams = Type.Object(
  { stationId: Type.String({ minLength: 1, maxLength: 80 }), key: Key },
  { additionalProperties: false },
);
export const RecordParams = Type.Object(
  { stationId: Type.String({ minLength: 1, maxLength: 80 }), recordId: Uuid },
  { additionalProperties: false },
);

const TextSpanInput = Type.Object({
  text: Type.String({ maxLength: 100_000 }),
  marks: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 50 })),
});
const DocumentInput = Type.Object(
  {
    version: Type.Integer({ minimum: 1 }),
    mode: Type.String({ minLength: 1, maxLength: 50 }),
    blocks: Type.Array(
      Type.Object(
        {
          id: Type.String({ minLength: 1, maxLength: 200 }),
          type: Type.String({ minLength: 1, maxLength: 100 }),
          content: Type.Unknown({ description: 'text blocks: an array of {text, marks}' }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 5000 },
    ),
  },
  { additionalProperties: false },
);
export { TextSpanInput };

export const PutRecordBody = Type.Object(
  {
    type: Key,
    values: Type.Record(Type.String(), Type.Unknown(), { maxProperties: MAX_FIELDS }),
    document: Type.Optional(Nullable(DocumentInput)),
    media: Type.Optional(Type.Array(Type.Object({ versionId: Uuid }, { additionalProperties: false }), { maxItems: 100 })),
    related: Type.Optional(
      Type.Object({ programIds: Type.Optional(Type.Array(Uuid, { maxItems: 100 })) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
export type PutRecordBody = Static<typeof PutRecordBody>;

export const PublishBody = Type.Object(
  {
    revision: Type.Optional(Type.Integer({ minimum: 1 })),
    notify: Type.Optional(PublishNotify),
  },
  { additionalProperties: false },
);

// ---- listener side ----

export const SORTS = ['publishedAt', 'updatedAt'] as const;
export const DIRECTIONS = ['desc', 'asc'] as const;
export type Sort = (typeof SORTS)[number];
export type Direction = (typeof DIRECTIONS)[number];
export const MAX_FILTERS = 10;
export const MAX_CURSOR_LENGTH = 400;

export const SchemasQuery = Type.Object(
  { type: Type.Optional(Key), version: Type.Optional(Type.Integer({ minimum: 1, description: 'needs `type`' })) },
  { additionalProperties: false },
);

export const ContentListQuery = Type.Object(
  {
    type: Key,
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_CURSOR_LENGTH,
        description: 'opaque; only valid with the type, filters, sort and direction that produced it',
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 50, default: 25 }),
    sort: StringEnum(SORTS, { default: 'publishedAt' }),
    direction: StringEnum(DIRECTIONS, { default: 'desc' }),
    filter: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), {
        maxItems: MAX_FILTERS,
        description: 'repeatable: field:value, field.contains:value, field.anyOf:a,b (text and choices fields)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ContentListQuery = Static<typeof ContentListQuery>;

const stationSlug = StationSlugParams.properties.stationSlug;
export const ContentIdParams = Type.Object({ stationSlug, id: Uuid }, { additionalProperties: false });
export const BySlugParams = Type.Object(
  { stationSlug, type: Key, slug: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

const FieldDefinitionOut = Type.Object(
  {
    key: Type.String(),
    label: Type.String(),
    kind: Type.String(),
    required: Type.Boolean(),
    maxLength: Type.Optional(Type.Integer()),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    choices: Type.Optional(Type.Array(Type.Object({ key: Type.String(), label: Type.String() }))),
    multiple: Type.Optional(Type.Boolean()),
    targetType: Type.Optional(Type.String()),
    maxItems: Type.Optional(Type.Integer()),
    fields: Type.Optional(Type.Array(Type.Object({ key: Type.String(), label: Type.String(), kind: Type.String() }))),
  },
  { additionalProperties: false },
);

export const ContentTypeDefinition = Type.Object(
  {
    key: Type.String(),
    label: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    archived: Type.Boolean(),
    fields: Type.Array(FieldDefinitionOut),
  },
  { title: 'ContentType' },
);
export type ContentTypeDefinition = Static<typeof ContentTypeDefinition>;

export const SchemasResponse = Type.Object(
  { contractVersion: Type.Literal(1), types: Type.Array(ContentTypeDefinition, { maxItems: 100 }) },
  { title: 'ContentSchemas' },
);

const Path = Nullable(Type.String());
export const MediaItem = Type.Object(
  {
    assetId: Type.String(),
    versionId: Type.String(),
    kind: Type.String(),
    url: Type.String({ description: '/api/media/public/{stationId}/{versionId}' }),
    credits: Type.String(),
    mime: Type.String(),
    alt: Type.String(),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    duration: Nullable(Type.Number()),
    variants: Type.Object({ thumb: Path, display: Path, card: Path, square: Path }),
  },
  { title: 'MediaItem' },
);
export type MediaItem = Static<typeof MediaItem>;

export const PublishedRecord = Type.Object(
  {
    contractVersion: Type.Literal(1),
    id: Type.String(),
    publicationId: Type.String(),
    revision: Type.Integer(),
    type: Type.String(),
    schemaVersion: Type.Integer(),
    publishedAt: Timestamp,
    firstPublishedAt: Timestamp,
    values: Type.Record(Type.String(), Type.Unknown()),
    document: Type.Object({
      version: Type.Integer(),
      mode: Type.String(),
      blocks: Type.Array(Type.Object({ id: Type.String(), type: Type.String(), content: Type.Unknown() })),
    }),
    media: Type.Array(MediaItem),
    related: Type.Object({ programIds: Type.Array(Type.String()) }),
  },
  { title: 'ContentRecord' },
);
export type PublishedRecord = Static<typeof PublishedRecord>;

export const ContentList = Type.Object(
  {
    contractVersion: Type.Literal(1),
    type: Type.String(),
    records: Type.Array(PublishedRecord, { maxItems: 50 }),
    nextCursor: Nullable(Type.String()),
    page: Type.Object({ limit: Type.Integer(), nextCursor: Nullable(Type.String()) }),
  },
  { title: 'ContentList' },
);

export const SavedContentType = Type.Object({ key: Type.String(), version: Type.Integer() });
export const SavedRecord = Type.Object({ id: Type.String(), revision: Type.Integer() });
export const PublishedReceipt = Type.Object({
  id: Type.String(),
  revision: Type.Integer(),
  publishedAt: Timestamp,
  notificationId: Type.Optional(
    Nullable(Type.String({ description: 'with `notify`: the content notification of this revision; null when push is not configured' })),
  ),
});
