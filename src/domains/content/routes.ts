import { listenerErrorResponses, listenerRead } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { JSON_TYPE, Representation } from '../../lib/readCache.ts';
import { StationSlugParams } from '../../http/schema.ts';
import { contentAdminRoutes } from './adminRoutes.ts';
import { contentListJson, filtersFromQuery, listPublishedRecords } from './queries.ts';
import { recordBySlugRead, recordRead, schemasRead } from './reads.ts';
import { BySlugParams, ContentIdParams, ContentList, ContentListQuery, PublishedRecord, SchemasQuery, SchemasResponse } from './schemas.ts';

// Listener routes of content delivery: schema definitions, record lists, one record by id or slug.
// Every read goes to the published projection, so unpublish and switches apply on the next read.

const listenerErrors = listenerErrorResponses(
  'Station unknown, inactive or offline; module switched off (MODULE_DISABLED); or nothing published.',
);

const listenerRoutes = [
  defineRoute({
    ...listenerRead,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/schemas',
    operationId: 'listSchemas',
    summary: 'Content type definitions (private and system fields left out)',
    description:
      'Without `type`: every current type, ordered by key (at most 100). With `type`: that type at `version` (default current); a historical version only once a record was published with it.',
    module: 'schemas',
    cache: 'content',
    params: StationSlugParams,
    query: SchemasQuery,
    responses: { 200: { description: 'Definitions.', schema: SchemasResponse }, ...listenerErrors },
    handler({ svc, station, query }) {
      return schemasRead(svc, station, query);
    },
  }),
  defineRoute({
    ...listenerRead,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/content',
    operationId: 'listContent',
    summary: 'Published records of a type, filtered, sorted and paged by cursor',
    module: 'content',
    cache: 'content',
    params: StationSlugParams,
    query: ContentListQuery,
    responses: { 200: { description: 'A page of records.', schema: ContentList }, ...listenerErrors },
    async handler({ svc, station, query }) {
      const filters = filtersFromQuery(query.filter);
      const page = await listPublishedRecords(svc.db, svc.config.secret, {
        stationId: station.id,
        type: query.type,
        filters,
        sort: query.sort,
        direction: query.direction,
        limit: query.limit,
        cursor: query.cursor,
      });
      return new Representation(Buffer.from(contentListJson(query.type, query.limit, page)), JSON_TYPE);
    },
  }),
  defineRoute({
    ...listenerRead,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/content/{id}',
    operationId: 'getContent',
    summary: 'One published record by id',
    module: 'content',
    cache: 'content',
    params: ContentIdParams,
    responses: { 200: { description: 'The record.', schema: PublishedRecord }, ...listenerErrors },
    handler({ svc, station, params }) {
      return recordRead(svc, station, params.id);
    },
  }),
  defineRoute({
    ...listenerRead,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/content/{type}/by-slug/{slug}',
    operationId: 'getContentBySlug',
    summary: 'One published record by a slug it uses or used before',
    description: 'A former slug resolves too and returns the current record: compare `values.slug` with the requested slug.',
    module: 'content',
    cache: 'content',
    params: BySlugParams,
    responses: { 200: { description: 'The record.', schema: PublishedRecord }, ...listenerErrors },
    handler({ svc, station, params }) {
      return recordBySlugRead(svc, station, params.type, params.slug);
    },
  }),
];

/** The domain's whole route table: listener reads, then the admin side. */
export const contentRoutes = [...listenerRoutes, ...contentAdminRoutes];
