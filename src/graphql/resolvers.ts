import { presentStationDocument } from '../domains/stations/presenter.ts';
import type { Station } from '../domains/stations/model.ts';
import type { Credential } from '../domains/auth/model.ts';
import type { Services } from '../services.ts';
import { isUuid } from '../lib/ids.ts';
import { KEY_PATTERN } from '../http/schema.ts';
import { presentContentType } from '../domains/content/presenter.ts';
import { findTypeVersion, listCurrentTypes } from '../domains/content/types.ts';
import { findPublishedRecord, findPublishedRecordBySlug, listPublishedRecords } from '../domains/content/queries.ts';
import type { ContentFilter, FilterOp } from '../domains/content/filters.ts';
import { MAX_CURSOR_LENGTH, MAX_FILTERS, type Direction, type Sort } from '../domains/content/schemas.ts';
import type { ModuleKey } from '../domains/stations/model.ts';
import { ModuleDisabledError } from '../lib/errors.ts';
import { UnauthenticatedError } from '../lib/errors.ts';
import { grantAllows } from '../domains/preview/grants.ts';
import { previewRevision } from '../domains/preview/queries.ts';
import { guard, invalid, notFound } from './errors.ts';
import { readResolvers } from './reads.ts';
import type { ReadArea } from '../lib/readCache.ts';

export type GraphQLContext = {
  svc: Services;
  station: Station;
  credential: Credential;
  /** The X-Preview-Grant header, for previewEditorial. */
  previewGrant?: string;
  /** Set by the HTTP layer from the result's coded errors. */
  status?: number;
  /**
   * What the response shows, while it can be kept whole (graphql/routes.ts): the read areas used and
   * the earliest instant one of their answers changes. Unset by any root field not served from the
   * cached reads, and by errors.
   */
  answer?: { areas: Set<ReadArea>; validUntil: number };
};

const KEY = new RegExp(KEY_PATTERN);

function requireModule(ctx: GraphQLContext, module: ModuleKey): void {
  if (!ctx.station.modules[module]) throw new ModuleDisabledError(module);
}

function checkKey(path: string, value: string): void {
  if (!KEY.test(value)) throw invalid(path, `${path} must match ${KEY_PATTERN}`, KEY.test(value.toLowerCase()) ? { suggestion: value.toLowerCase() } : {});
}

function checkLimit(limit: number, max: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw invalid('limit', `limit must be between 1 and ${max}`, { code: limit < 1 ? 'too_small' : 'too_big', suggestion: limit < 1 ? 1 : max });
  }
}

interface FilterInput {
  field: string;
  op: FilterOp;
  value?: string | null;
  values?: string[] | null;
}

function toFilters(input: FilterInput[] | null | undefined): ContentFilter[] {
  const filters = input ?? [];
  if (filters.length > MAX_FILTERS) throw invalid('filter', `at most ${MAX_FILTERS} filters`, { code: 'too_big' });
  return filters.map((f, i) => {
    checkKey(`filter.${i}.field`, f.field);
    const values = f.op === 'anyOf' ? (f.values ?? (f.value != null ? f.value.split(',') : [])) : f.value != null ? [f.value] : (f.values ?? []).slice(0, 1);
    if (values.length === 0 || values.some((v) => v === '')) throw invalid(`filter.${i}`, `filter ${i + 1} needs ${f.op === 'anyOf' ? 'values' : 'a value'}`);
    return { field: f.field, op: f.op, values };
  });
}

const parseRecord = (body: string | null) => (body === null ? null : JSON.parse(body));

interface PreviewInput {
  stationId: string;
  recordId: string;
  revision?: number | null;
  audience?: string | null;
}

export const rootValue = {
  ...readResolvers,
  previewEditorial: (args: { input?: PreviewInput | null }, ctx: GraphQLContext) =>
    guard(async () => {
      const input = args.input;
      if (!input) throw invalid('input', 'input is required', { code: 'required' });
      if (input.stationId !== ctx.station.id) throw notFound('Record not found.');
      if (!isUuid(input.recordId)) throw invalid('input.recordId', 'recordId must be a UUID');
      if (!grantAllows(ctx.svc.config.secret, ctx.previewGrant, ctx.station.id, input.recordId, ctx.svc.clock.now())) {
        throw new UnauthenticatedError('A valid preview grant for this record is needed.');
      }
      if (input.revision != null && input.revision < 1) throw invalid('input.revision', 'revision must be a positive integer', { code: 'too_small' });
      return previewRevision(ctx.svc.db, ctx.station.id, input.recordId, input.revision);
    }),

  station: (_: unknown, ctx: GraphQLContext) => presentStationDocument(ctx.station, ctx.svc.config),

  schemas: (args: { type?: string | null; version?: number | null }, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'schemas');
      if (args.type == null) {
        if (args.version != null) throw invalid('version', 'version can only be given together with type', { code: 'requires_type' });
        return (await listCurrentTypes(ctx.svc.db, ctx.station.id)).map(presentContentType);
      }
      checkKey('type', args.type);
      if (args.version != null && args.version < 1) throw invalid('version', 'version must be a positive integer', { code: 'too_small', suggestion: 1 });
      const type = await findTypeVersion(ctx.svc.db, ctx.station.id, args.type, args.version ?? undefined);
      if (!type) throw notFound(args.version == null ? 'Unknown content type.' : 'No published snapshot of this content type version.');
      return [presentContentType(type)];
    }),

  content: (args: { type: string; cursor?: string | null; limit: number; sort: Sort; direction: Direction; filter?: FilterInput[] | null }, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'content');
      checkKey('type', args.type);
      checkLimit(args.limit, 50);
      if (args.cursor != null && (args.cursor.length < 1 || args.cursor.length > MAX_CURSOR_LENGTH)) throw invalid('cursor', `cursor must be 1 to ${MAX_CURSOR_LENGTH} characters`);
      const page = await listPublishedRecords(ctx.svc.db, ctx.svc.config.secret, {
        stationId: ctx.station.id,
        type: args.type,
        filters: toFilters(args.filter),
        sort: args.sort,
        direction: args.direction,
        limit: args.limit,
        cursor: args.cursor ?? undefined,
      });
      return { records: page.records.map((r) => JSON.parse(r)), nextCursor: page.nextCursor };
    }),

  contentRecord: (args: { id: string }, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'content');
      if (!isUuid(args.id)) throw invalid('id', 'id must be a UUID');
      const record = parseRecord(await findPublishedRecord(ctx.svc.db, ctx.station.id, args.id));
      if (!record) throw notFound('Record not found.');
      return record;
    }),

  contentBySlug: (args: { type: string; slug: string }, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'content');
      checkKey('type', args.type);
      if (args.slug.length < 1 || args.slug.length > 200) throw invalid('slug', 'slug must be 1 to 200 characters', { code: 'too_big' });
      const record = parseRecord(await findPublishedRecordBySlug(ctx.svc.db, ctx.station.id, args.type, args.slug));
      if (!record) throw notFound('Record not found.');
      return record;
    }),
};

