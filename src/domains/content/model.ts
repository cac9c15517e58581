// Content types, records and their stored rows (docs/content.md#listener-reads,
// docs/content.md#how-a-record-reaches-listeners).

export const FIELD_KINDS = ['text', 'rich_text', 'number', 'boolean', 'datetime', 'choices', 'media', 'content', 'group'] as const;
export type FieldKind = (typeof FIELD_KINDS)[number];

/** Kinds whose value may be repeated (`multiple: true`, bounded by `maxItems`). */
export const REPEATABLE_KINDS: readonly FieldKind[] = ['choices', 'media', 'content', 'group'];
/** Kinds listeners can filter on (only when delivered, i.e. neither private nor system). */
export const FILTERABLE_KINDS: readonly FieldKind[] = ['text', 'choices'];

export interface Choice {
  key: string;
  label: string;
}

/** A field definition as stored: normalised, with every flag explicit. */
export interface FieldDefinition {
  key: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  private: boolean;
  system: boolean;
  maxLength?: number;
  min?: number;
  max?: number;
  choices?: Choice[];
  multiple?: boolean;
  targetType?: string;
  maxItems?: number;
  fields?: FieldDefinition[];
}

export const isDelivered = (field: FieldDefinition): boolean => !field.private && !field.system;

export interface ContentTypeRow {
  station_id: string;
  key: string;
  label: string;
  current_version: number;
  archived: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface ContentTypeVersionRow {
  station_id: string;
  key: string;
  version: number;
  label: string;
  fields: FieldDefinition[];
  created_at: Date;
  published_at: Date | null;
}

export interface RecordRow {
  id: string;
  station_id: string;
  type: string;
  latest_revision: number;
  published_revision: number | null;
  first_published_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface TextSpan {
  text: string;
  marks: unknown[];
}

export interface DocumentBlock {
  id: string;
  type: string;
  content: unknown;
}

export interface RecordDocument {
  version: number;
  mode: string;
  blocks: DocumentBlock[];
}

export const EMPTY_DOCUMENT: RecordDocument = Object.freeze({ version: 1, mode: 'blocks', blocks: [] as DocumentBlock[] });

export type Values = Record<string, unknown>;

export interface RevisionRow {
  record_id: string;
  revision: number;
  schema_version: number;
  values: Values;
  document: RecordDocument | null;
  media: Array<{ versionId: string }>;
  related: { programIds?: string[] };
  created_at: Date;
}

export interface PublishedRecordRow {
  record_id: string;
  station_id: string;
  type: string;
  revision: number;
  schema_version: number;
  slug: string | null;
  published_at: Date;
  first_published_at: Date;
  updated_at: Date;
  delivered_values: Values;
  body: unknown;
  publication_id: string;
  position_from: number;
}

export interface MediaVersionRow {
  id: string;
  asset_id: string;
  station_id: string;
  kind: string;
  mime: string;
  alt: string;
  credits: string;
  width: number | null;
  height: number | null;
  duration: number | null;
}
