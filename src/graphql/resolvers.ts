import { presentStationDocument } from '../domains/stations/presenter.ts';
import { isUuid } from '../lib/ids.ts';
import { KEY_PATTERN } from '../http/schema.ts';
import { listPublishedRecords } from '../domains/content/queries.ts';
import type { ContentFilter, FilterOp } from '../domains/content/filters.ts';
import { MAX_CURSOR_LENGTH, MAX_FILTERS, type Direction, type Sort } from '../domains/content/schemas.ts';
import { UnauthenticatedError } from '../lib/errors.ts';
import { grantAllows } from '../domains/preview/grants.ts';
import { previewRevision } from '../domains/preview/queries.ts';
import { guard, invalid, notFound } from './errors.ts';
import { readResolvers } from './reads.ts';
import { cached, requireModule, valueOf, type GraphQLContext } from './context.ts';
import { recordBySlugRead, recordRead, schemasRead } from '../domains/content/reads.ts';
import { Representation } from '../lib/readCache.ts';

const KEY = new RegExp(KEY_PATTERN);

function checkKey(path: string, value: string): void {
  if (!KEY.test(value))
    throw invalid(path, `${path} must match ${KEY_PATTERN}`, KEY.test(value.toLowerCase()) ? { suggestion: value.toLowerCase() } : {});
}

function checkLimit(limit: number, max: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw invalid('limit', `limit must be between 1 and ${max}`, {
      code: limit < 1 ? 'too_small' : 'too_big',
      suggestion: limit < 1 ? 1 : max,
    });
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
    const values =
      f.op === 'anyOf'
        ? (f.values ?? (f.value != null ? f.value.split(',') : []))
        : f.value != null
          ? [f.value]
          : (f.values ?? []).slice(0, 1);
    if (values.length === 0 || values.some((v) => v === ''))
      throw invalid(`filter.${i}`, `filter ${i + 1} needs ${f.op === 'anyOf' ? 'values' : 'a value'}`);
    return { field: f.field, op: f.op, values };
  });
}

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
      if (input.revision != null && input.revision < 1)
        throw invalid('input.revision', 'revision must be a positive integer', { code: 'too_small' });
      return previewRevision(ctx.svc.db, ctx.station.id, input.recordId, input.revision);
    }),

  station: (_: unknown, ctx: GraphQLContext) => presentStationDocument(ctx.station, ctx.svc.config),

  schemas: (args: { type?: string | null; version?: number | null }, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'schemas');
      if (args.type == null) {
        if (args.version != null) throw invalid('version', 'version can only be given together with type', { code: 'requires_type' });
      } else {
        checkKey('type', args.type);
        if (args.version != null && args.version < 1)
          throw invalid('version', 'version must be a positive integer', { code: 'too_small', suggestion: 1 });
      }
      const query = { ...(args.type != null ? { type: args.type } : {}), ...(args.version != null ? { version: args.version } : {}) };
      const params: Record<string, string> = {
        ...(query.type !== undefined ? { type: query.type } : {}),
        ...(query.version !== undefined ? { version: String(query.version) } : {}),
      };
      const rep = await cached(ctx, 'listSchemas', 'content', params, () => schemasRead(ctx.svc, ctx.station, query));
      return (valueOf(rep) as { types: unknown[] }).types;
    }),

  content: (
    args: { type: string; cursor?: string | null; limit: number; sort: Sort; direction: Direction; filter?: FilterInput[] | null },
    ctx: GraphQLContext,
  ) =>
    guard(async () => {
      requireModule(ctx, 'content');
      checkKey('type', args.type);
      checkLimit(args.limit, 50);
      if (args.cursor != null && (args.cursor.length < 1 || args.cursor.length > MAX_CURSOR_LENGTH))
        throw invalid('cursor', `cursor must be 1 to ${MAX_CURSOR_LENGTH} characters`);
      const filters = toFilters(args.filter);
      const listing = {
        type: args.type,
        filters,
        sort: args.sort,
        direction: args.direction,
        limit: args.limit,
        cursor: args.cursor ?? undefined,
      };
      // Its own key (GraphQL filters are structured, REST's are query parameters), in the same cache.
      const rep = await cached(ctx, 'graphqlContent', 'content', { listing: JSON.stringify(listing) }, async () => {
        const page = await listPublishedRecords(ctx.svc.db, ctx.svc.config.secret, { stationId: ctx.station.id, ...listing });
        return Representation.json({ records: page.records.map((r) => JSON.parse(r)), nextCursor: page.nextCursor });
      });
      return rep.value;
    }),

  contentRecord: (args: { id: string }, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'content');
      if (!isUuid(args.id)) throw invalid('id', 'id must be a UUID');
      // The key of REST's GET …/content/{id}: both read the same cached answer.
      const path = `/api/v1/stations/${ctx.station.slug}/content/${args.id}`;
      return valueOf(await cached(ctx, 'getContent', 'content', {}, () => recordRead(ctx.svc, ctx.station, args.id), path));
    }),

  contentBySlug: (args: { type: string; slug: string }, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'content');
      checkKey('type', args.type);
      if (args.slug.length < 1 || args.slug.length > 200) throw invalid('slug', 'slug must be 1 to 200 characters', { code: 'too_big' });
      const path = `/api/v1/stations/${ctx.station.slug}/content/${encodeURIComponent(args.type)}/by-slug/${encodeURIComponent(args.slug)}`;
      return valueOf(
        await cached(ctx, 'getContentBySlug', 'content', {}, () => recordBySlugRead(ctx.svc, ctx.station, args.type, args.slug), path),
      );
    }),
};
