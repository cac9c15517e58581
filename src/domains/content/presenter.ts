import { CONTRACT_VERSION, mediaBasePath } from '../stations/presenter.ts';
import { MEDIA_VARIANTS, type MediaVariant } from '../media/model.ts';
import {
  EMPTY_DOCUMENT,
  isDelivered,
  type DocumentBlock,
  type FieldDefinition,
  type MediaVersionRow,
  type RecordDocument,
  type Values,
} from './model.ts';
import type { ContentTypeDefinition, MediaItem, PublishedRecord } from './schemas.ts';

// The one place records, media items and type definitions get their public shape. REST, GraphQL
// and the `content` feed row all use these, and the record body is computed once, at publish.

type DeliveredField = ContentTypeDefinition['fields'][number];

function presentField(field: FieldDefinition): DeliveredField {
  const out: DeliveredField = { key: field.key, label: field.label, kind: field.kind, required: field.required };
  if (field.maxLength !== undefined) out.maxLength = field.maxLength;
  if (field.min !== undefined) out.min = field.min;
  if (field.max !== undefined) out.max = field.max;
  if (field.choices) out.choices = field.choices.map((c) => ({ key: c.key, label: c.label }));
  if (field.multiple !== undefined) out.multiple = field.multiple;
  if (field.targetType !== undefined) out.targetType = field.targetType;
  if (field.maxItems !== undefined) out.maxItems = field.maxItems;
  if (field.fields) out.fields = presentFields(field.fields);
  return out;
}

/** Field definitions as listeners see them: private and system fields (and their flags) left out. */
export const presentFields = (fields: FieldDefinition[]): DeliveredField[] => fields.filter(isDelivered).map(presentField);

export function presentContentType(type: {
  key: string;
  label: string;
  version: number;
  archived: boolean;
  fields: FieldDefinition[];
}): ContentTypeDefinition {
  return { key: type.key, label: type.label, version: type.version, archived: type.archived, fields: presentFields(type.fields) };
}

export const mediaUrl = (stationId: string, versionId: string, variant?: MediaVariant): string =>
  `${mediaBasePath(stationId)}${versionId}${variant ? `/${variant}` : ''}`;

/**
 * A media item. An image's variants are paths from its first delivery, whether or not the worker has
 * rendered them yet (a rendition asked for early is rendered then); other kinds have none (null).
 */
export function presentMediaItem(stationId: string, version: MediaVersionRow): MediaItem {
  const variants = {} as MediaItem['variants'];
  for (const variant of MEDIA_VARIANTS) {
    variants[variant] = version.kind === 'image' ? mediaUrl(stationId, version.id, variant) : null;
  }
  return {
    assetId: version.asset_id,
    versionId: version.id,
    kind: version.kind,
    url: mediaUrl(stationId, version.id),
    credits: version.credits,
    mime: version.mime,
    alt: version.alt,
    width: version.width,
    height: version.height,
    duration: version.duration,
    variants,
  };
}

/** Text spans always carry `marks`, so clients can iterate without checks. */
function presentBlock(block: DocumentBlock): DocumentBlock {
  const content = Array.isArray(block.content)
    ? block.content.map((span: unknown) =>
        span && typeof span === 'object' && 'text' in span && !('marks' in span) ? { ...span, marks: [] } : span,
      )
    : block.content;
  return { id: block.id, type: block.type, content: content ?? null };
}

export function presentDocument(document: RecordDocument | null): RecordDocument {
  const doc = document ?? EMPTY_DOCUMENT;
  return { version: doc.version, mode: doc.mode, blocks: doc.blocks.map(presentBlock) };
}

export interface PublicationInput {
  stationId: string;
  recordId: string;
  type: string;
  publicationId: string;
  revision: number;
  schemaVersion: number;
  publishedAt: Date;
  firstPublishedAt: Date;
  /** Already reduced to delivered fields (see values.ts `deliveredValues`). */
  values: Values;
  document: RecordDocument | null;
  media: MediaItem[];
  programIds: string[];
}

/** The published record exactly as listeners receive it (stored as published_records.body). */
export function presentRecord(input: PublicationInput): PublishedRecord {
  return {
    contractVersion: CONTRACT_VERSION,
    id: input.recordId,
    publicationId: input.publicationId,
    revision: input.revision,
    type: input.type,
    schemaVersion: input.schemaVersion,
    publishedAt: input.publishedAt.toISOString(),
    firstPublishedAt: input.firstPublishedAt.toISOString(),
    values: input.values,
    document: presentDocument(input.document),
    media: input.media,
    related: { programIds: input.programIds },
  };
}
