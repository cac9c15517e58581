import type { Knex } from 'knex';
import type { Db } from '../../lib/db.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { decodeCursor, encodeCursor, type CursorKey, type Listing } from './cursor.ts';
import { applyFilters, checkFilterFields, parseFilters, type ContentFilter } from './filters.ts';
import type { Direction, Sort } from './schemas.ts';
import { findTypeVersion } from './types.ts';

// Listener reads. They touch only the published projection, through its indexes, and return the
// stored record bodies as JSON text so a page is never parsed and re-serialised.

const SORT_COLUMNS: Record<Sort, string> = { publishedAt: 'published_at', updatedAt: 'updated_at' };

export interface ListInput {
  stationId: string;
  type: string;
  /** Already parsed (REST `filter` strings go through `parseFilters`). */
  filters: ContentFilter[];
  sort: Sort;
  direction: Direction;
  limit: number;
  cursor?: string;
}

export interface RecordPage {
  /** Each element is one published record as JSON text. */
  records: string[];
  nextCursor: string | null;
}

interface PageRow {
  body: string;
  sort_at: Date;
  record_id: string;
  /** First pages only: the walk's snapshot (see positions.ts). */
  as_of?: number | string | null;
}

/** A listing as the page query reads it: `matching` are its filters as they match (checkFilterFields), when they differ from those it is bound to. */
type PageListing = Listing & { matching?: ContentFilter[] };

const keyset = (listing: Listing) => (listing.direction === 'desc' ? '<' : '>');
const order = (listing: Listing, column: string, id: string) => [
  { column, order: listing.direction },
  { column: id, order: listing.direction },
];

/** Records at their current positions; with `after`, only those that already held them at its asOf. */
function currentPositions(db: Db, listing: PageListing, limit: number, after: CursorKey | null): Knex.QueryBuilder {
  const column = SORT_COLUMNS[listing.sort];
  const query = db('published_records')
    // A later page turns only its final rows into text (the outer query of pageQuery).
    .select(after ? 'body' : db.raw('body::text AS body'), `${column} AS sort_at`, 'record_id')
    .where({ station_id: listing.stationId, type: listing.type });
  applyFilters(query, listing.matching ?? listing.filters);
  if (after) {
    query.where('position_from', '<=', after.asOf);
    // A row comparison the (station_id, type, sort column, record_id) index can seek to.
    query.whereRaw(`(${column}, record_id) ${keyset(listing)} (?, ?)`, [after.at, after.id]);
  }
  return query.orderBy(order(listing, column, 'record_id')).limit(limit);
}

/**
 * Records that moved (or were unpublished and published again) after the walk's asOf, at the positions
 * they held then, with their current body. Only history rows closed after asOf are read (few: the
 * moves since the first page), whatever the depth. They are sorted before the join so the merge with
 * the other branch looks up only the published rows it takes.
 */
function formerPositions(db: Db, listing: PageListing, limit: number, after: CursorKey): Knex.QueryBuilder {
  const column = SORT_COLUMNS[listing.sort];
  const positions = db('record_position_history')
    .select('record_id', `${column} AS sort_at`)
    .where({ station_id: listing.stationId, type: listing.type })
    .where('valid_until', '>', after.asOf)
    .where('valid_from', '<=', after.asOf)
    .whereRaw(`(${column}, record_id) ${keyset(listing)} (?, ?)`, [after.at, after.id])
    .orderBy(order(listing, column, 'record_id'));
  const query = db
    .from(positions.as('h'))
    .join('published_records as p', 'p.record_id', 'h.record_id')
    .select('p.body', 'h.sort_at', 'h.record_id')
    .where('p.position_from', '>', after.asOf); // implied by the history row; keeps the branches disjoint
  applyFilters(query, listing.matching ?? listing.filters); // on p.delivered_values: filters see current values
  return query.orderBy(order(listing, 'h.sort_at', 'h.record_id')).limit(limit);
}

/**
 * The page query itself (exported so the benchmark can EXPLAIN exactly what runs). A first page reads
 * the current projection and, in the same statement (same snapshot), the type's position clock as the
 * walk's asOf. A later page merges records still at their asOf position with those that moved since.
 */
export function pageQuery(db: Db, listing: PageListing, limit: number, after: CursorKey | null): Knex.QueryBuilder {
  if (!after) {
    return currentPositions(db, listing, limit, null).select(
      db.raw('(SELECT position_seq FROM content_types WHERE station_id = ? AND key = ?) AS as_of', [listing.stationId, listing.type]),
    );
  }
  const merged = db.raw('((?) UNION ALL (?)) AS page', [
    currentPositions(db, listing, limit, after),
    formerPositions(db, listing, limit, after),
  ]);
  return db
    .select(db.raw('body::text AS body'), 'sort_at', 'record_id')
    .from(merged)
    .orderBy(order(listing, 'sort_at', 'record_id'))
    .limit(limit);
}

/**
 * One page of published records of a type. An unknown type is an empty page, unless filters are
 * passed (then 404: there are no fields to filter on). Filters are checked against the type's
 * current version.
 */
export async function listPublishedRecords(db: Db, secret: string, input: ListInput): Promise<RecordPage> {
  let matching: ContentFilter[] | undefined;
  if (input.filters.length > 0) {
    const type = await findTypeVersion(db, input.stationId, input.type);
    if (!type) throw new NotFoundError(`Content type "${input.type}" does not exist.`);
    matching = checkFilterFields(input.filters, type.fields, input.type);
  }
  // Cursors are bound to the filters as sent; the query runs them as they match.
  const listing: PageListing = {
    stationId: input.stationId,
    type: input.type,
    filters: input.filters,
    matching,
    sort: input.sort,
    direction: input.direction,
  };
  const after = input.cursor === undefined ? null : decodeCursor(secret, listing, input.cursor);
  const rows: PageRow[] = await pageQuery(db, listing, input.limit + 1, after);
  const more = rows.length > input.limit;
  const page = more ? rows.slice(0, input.limit) : rows;
  const last = page[page.length - 1];
  const asOf = after ? after.asOf : Number(last?.as_of ?? 0);
  return {
    records: page.map((r) => r.body),
    nextCursor: more ? encodeCursor(secret, listing, { at: last.sort_at, id: last.record_id, asOf }) : null,
  };
}

/** Parses REST `filter` parameters (GraphQL builds ContentFilter objects itself). */
export const filtersFromQuery = (raw: readonly string[] | undefined): ContentFilter[] => parseFilters(raw ?? []);

/** The published record as JSON text, or null (unpublished, unknown or another station's). */
export async function findPublishedRecord(db: Db, stationId: string, id: string): Promise<string | null> {
  const row = await db('published_records')
    .select(db.raw('body::text AS body'))
    .where({ record_id: id.toLowerCase(), station_id: stationId })
    .first();
  return (row?.body as string | undefined) ?? null;
}

/**
 * The published record of a type that uses or once used the slug: of several, the one that published
 * with it last, so a slug falls back to an earlier user when the later one is unpublished or deleted.
 */
export async function findPublishedRecordBySlug(db: Db, stationId: string, type: string, slug: string): Promise<string | null> {
  const row = await db('record_slugs as s')
    .join('published_records as p', 'p.record_id', 's.record_id')
    .select(db.raw('p.body::text AS body'))
    .where({ 's.station_id': stationId, 's.type': type, 's.slug': slug, 'p.station_id': stationId, 'p.type': type })
    .orderBy([
      { column: 's.used_at', order: 'desc' },
      { column: 's.record_id', order: 'desc' },
    ])
    .first();
  return (row?.body as string | undefined) ?? null;
}

/** `{contractVersion, type, records, nextCursor, page}` assembled around the stored record JSON. */
export function contentListJson(type: string, limit: number, page: RecordPage): string {
  const cursor = JSON.stringify(page.nextCursor);
  return `{"contractVersion":1,"type":${JSON.stringify(type)},"records":[${page.records.join(',')}],"nextCursor":${cursor},"page":{"limit":${limit},"nextCursor":${cursor}}}`;
}
