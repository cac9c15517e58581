// npm run bench:content — content list latency with 100 000 published records in one station:
// a first page and a page reached by cursor at depth ~50 000, without filters and with two filters,
// p50/p99 per request, the deep/first ratio (target ≤ 1.5), and EXPLAIN ANALYZE of each page query.
// Deep cursors carry a snapshot (asOf) taken before MOVES records were republished, so deep pages
// also merge the positions those records held at asOf (record_position_history).
//
// Uses its own database (BENCH_DATABASE_URL, default waveline_bench, recreated on every run) and
// Redis index (BENCH_REDIS_URL, default index 15). Records are bulk-inserted with SQL in the shape the
// publish command stores; a few go through the admin API first to prove the path end to end.
import { recreateDatabase } from '../src/lib/migrate.ts';
import type { Knex } from 'knex';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/lib/logger.ts';
import { migrate } from '../src/roles/migrate.ts';
import { createWebServices } from '../src/roles/services.ts';
import { startWeb } from '../src/roles/web.ts';
import { encodeCursor, type CursorKey, type Listing } from '../src/domains/content/cursor.ts';
import { parseFilters } from '../src/domains/content/filters.ts';
import { pageQuery } from '../src/domains/content/queries.ts';
import { BENCH_ENV } from './support.ts';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const DEPTH = Math.floor(RECORDS / 2);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 400);
const LIMIT = 25;
const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const FILTERS = ['category.anyOf:music,local,sport', 'tags:live'];
/** About 5 % of the records match these; the deep page sits in the middle of the matches. */
const SELECTIVE = ['category:culture', 'tags:studio'];
/** Republications after the deep cursors' asOf (5 through the admin API, the rest in SQL). */
const MOVES = Number(process.env.BENCH_MOVES ?? 200);
/** Republications before asOf: history rows a walk never needs, which the history index must skip. */
const PAST_MOVES = Number(process.env.BENCH_PAST_MOVES ?? 50_000);

const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench';
Object.assign(process.env, {
  ...BENCH_ENV,
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/15',
  LOG_LEVEL: 'warn',
  PORT: '0',
});

const recreateBenchDatabase = () => recreateDatabase(databaseUrl);

const config = loadConfig();
await recreateBenchDatabase();
await migrate(config);
const logger = createLogger(config, 'bench');
const svc = await createWebServices(config, logger);
const web = await startWeb(svc, 0, logger);
const base = `http://127.0.0.1:${(web.server.address() as AddressInfo).port}`;

async function call(method: string, path: string, body?: unknown, token = ADMIN): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

// ---- data ----
const station = (await call('POST', '/admin/v1/stations', { slug: 'bench-fm', name: 'Bench FM', timezone: 'Europe/Berlin' })).json;
const token = (await call('POST', `/admin/v1/stations/${station.id}/credentials`, { scopes: ['listener:read'] })).json.token as string;
const choices = (keys: string[]) => keys.map((key) => ({ key, label: key }));
await call('PUT', `/admin/v1/stations/${station.id}/content-types/news`, {
  label: 'News',
  fields: [
    { key: 'title', label: 'Title', kind: 'text', required: true },
    { key: 'slug', label: 'Slug', kind: 'text' },
    { key: 'category', label: 'Category', kind: 'choices', choices: choices(['music', 'local', 'sport', 'culture']) },
    { key: 'tags', label: 'Tags', kind: 'choices', multiple: true, choices: choices(['live', 'studio', 'interview', 'festival']) },
    { key: 'internal_note', label: 'Note', kind: 'text', private: true },
  ],
});
for (let i = 0; i < 5; i++) {
  const id = crypto.randomUUID();
  await call('PUT', `/admin/v1/stations/${station.id}/records/${id}`, {
    type: 'news',
    values: { title: `Via API ${i}`, category: 'music', tags: ['live'] },
  });
  const published = await call('POST', `/admin/v1/stations/${station.id}/records/${id}/publish`);
  if (published.status !== 200) throw new Error(`publish through the admin API failed: ${JSON.stringify(published.json)}`);
}

const started = performance.now();
// Two records per second of publication time (so ties exist); category cycles through four keys
// (three of them match the first filter), tags include `live` on four records out of five.
await svc.db.raw(
  `
  WITH source AS (
    SELECT gen_random_uuid() AS id, i,
           timestamptz '2025-01-01T00:00:00Z' + (i / 2) * interval '1 second' AS at,
           jsonb_build_object(
             'title', 'Story number ' || i,
             'slug', 'story-' || i,
             'category', (ARRAY['music', 'local', 'sport', 'culture'])[1 + i % 4],
             'tags', CASE WHEN i % 5 = 0 THEN '["studio"]'::jsonb ELSE '["live", "interview"]'::jsonb END
           ) AS vals
    FROM generate_series(1, ?) AS i
  ), recs AS (
    INSERT INTO records (id, station_id, type, latest_revision, published_revision, first_published_at, created_at, updated_at)
    SELECT id, ?, 'news', 1, 1, at, at, at FROM source RETURNING id
  ), revs AS (
    INSERT INTO record_revisions (record_id, revision, schema_version, "values", document, created_at)
    SELECT id, 1, 1, vals, NULL, at FROM source RETURNING record_id
  )
  INSERT INTO published_records (record_id, station_id, type, revision, schema_version, slug, published_at, first_published_at, updated_at, delivered_values, body, publication_id)
  SELECT s.id, ?, 'news', 1, 1, s.vals ->> 'slug', s.at, s.at, s.at, s.vals,
         jsonb_build_object(
           'contractVersion', 1, 'id', s.id, 'publicationId', gen_random_uuid(), 'revision', 1, 'type', 'news', 'schemaVersion', 1,
           'publishedAt', to_char(s.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'firstPublishedAt', to_char(s.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'values', s.vals,
           'document', jsonb_build_object('version', 1, 'mode', 'blocks', 'blocks', jsonb_build_array(
             jsonb_build_object('id', 'b1', 'type', 'paragraph', 'content', jsonb_build_array(jsonb_build_object('text', repeat('Lorem ipsum dolor sit amet. ', 12), 'marks', '[]'::jsonb)))
           )),
           'media', '[]'::jsonb,
           'related', jsonb_build_object('programIds', '[]'::jsonb)
         ), gen_random_uuid()
  FROM source s
  `,
  [RECORDS, station.id, station.id],
);
await svc.db.raw('ANALYZE published_records; ANALYZE records; ANALYZE record_revisions');
console.log(`inserted ${RECORDS} published records in ${((performance.now() - started) / 1000).toFixed(1)} s`);

// ---- a history of past moves, a walk's snapshot, then records move ----
await svc.db.raw(
  `
  WITH moved AS (
    SELECT record_id, published_at, row_number() OVER () AS n
    FROM (SELECT * FROM published_records WHERE station_id = ? ORDER BY random() LIMIT ?) r
  ), history AS (
    INSERT INTO record_position_history (record_id, station_id, type, published_at, updated_at, valid_from, valid_until)
    SELECT record_id, ?, 'news', published_at - interval '1 day', published_at - interval '1 day', 0, n FROM moved
  ), clock AS (
    UPDATE content_types SET position_seq = position_seq + ? WHERE station_id = ? AND key = 'news'
  )
  UPDATE published_records p SET position_from = n FROM moved WHERE p.record_id = moved.record_id
  `,
  [station.id, PAST_MOVES, station.id, PAST_MOVES, station.id],
);
const asOf = Number((await svc.db('content_types').where({ station_id: station.id, key: 'news' }).first('position_seq')).position_seq);
const apiMoves: string[] = await svc
  .db('published_records')
  .where({ station_id: station.id })
  .orderByRaw('random()')
  .limit(5)
  .pluck('record_id');
for (const id of apiMoves) {
  const res = await call('POST', `/admin/v1/stations/${station.id}/records/${id}/publish`);
  if (res.status !== 200) throw new Error(`republish through the admin API failed: ${JSON.stringify(res.json)}`);
}
// The rest as publish stores them: the old position closed in the history, the new one at "now".
await svc.db.raw(
  `
  WITH moved AS (
    SELECT record_id, published_at, updated_at, position_from, row_number() OVER () AS n
    FROM (SELECT * FROM published_records WHERE station_id = ? AND position_from <= ? ORDER BY random() LIMIT ?) r
  ), clock AS (
    UPDATE content_types SET position_seq = position_seq + ? WHERE station_id = ? AND key = 'news' RETURNING position_seq - ? AS base
  ), history AS (
    INSERT INTO record_position_history (record_id, station_id, type, published_at, updated_at, valid_from, valid_until)
    SELECT record_id, ?, 'news', published_at, updated_at, position_from, base + n FROM moved, clock
  )
  UPDATE published_records p SET published_at = now(), updated_at = now(), position_from = base + n
  FROM moved, clock WHERE p.record_id = moved.record_id
  `,
  [station.id, asOf, MOVES - apiMoves.length, MOVES - apiMoves.length, station.id, MOVES - apiMoves.length, station.id],
);
for (const table of ['published_records', 'record_position_history', 'content_types']) await svc.db.raw(`VACUUM (ANALYZE) ${table}`);
console.log(`${PAST_MOVES} republications before and ${MOVES} after the deep cursors' asOf`);

// ---- measurement ----
interface Scenario {
  name: string;
  filters: string[];
  cursor?: string;
  listing: Listing;
  after: CursorKey | null;
}

/** The key at `depth` of the walk as it was at asOf (before the moves). */
async function keyAtDepth(listing: Listing, depth: number): Promise<CursorKey> {
  const start = {
    at: new Date(listing.direction === 'desc' ? '9999-01-01' : '0001-01-01'),
    id: '00000000-0000-0000-0000-000000000000',
    asOf,
  };
  const row = await pageQuery(svc.db, listing, depth, start).offset(depth - 1);
  return { at: row[0].sort_at, id: row[0].record_id, asOf };
}

const scenarios: Scenario[] = [];
for (const filters of [[], FILTERS]) {
  const listing: Listing = { stationId: station.id, type: 'news', filters: parseFilters(filters), sort: 'publishedAt', direction: 'desc' };
  const label = filters.length ? 'two filters' : 'no filter';
  scenarios.push({ name: `first page, ${label}`, filters, listing, after: null });
  // The benchmark builds the deep cursor directly (walking 2000 pages first would only measure the walk).
  const after = await keyAtDepth(listing, DEPTH);
  scenarios.push({ name: `depth ${DEPTH}, ${label}`, filters, listing, after, cursor: encodeCursor(config.secret, listing, after) });
}
{
  const listing: Listing = {
    stationId: station.id,
    type: 'news',
    filters: parseFilters(SELECTIVE),
    sort: 'publishedAt',
    direction: 'desc',
  };
  const matches = Number((await svc.db.from(pageQuery(svc.db, listing, RECORDS + MOVES, null).as('m')).count('* as n'))[0].n);
  const after = await keyAtDepth(listing, Math.floor(matches / 2));
  scenarios.push({ name: 'first page, selective filters', filters: SELECTIVE, listing, after: null });
  scenarios.push({
    name: `depth ${Math.floor(matches / 2)}/${matches}, selective`,
    filters: SELECTIVE,
    listing,
    after,
    cursor: encodeCursor(config.secret, listing, after),
  });
}

function urlOf(s: Scenario): string {
  const search = new URLSearchParams({ type: 'news', limit: String(LIMIT) });
  if (s.cursor) search.set('cursor', s.cursor);
  for (const f of s.filters) search.append('filter', f);
  return `${base}/api/v1/stations/${station.slug}/content?${search}`;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** Requests go round-robin over the cases, so machine noise falls on every case alike. */
async function measureAll(list: Scenario[]): Promise<Map<string, { p50: number; p99: number; records: number }>> {
  const headers = { authorization: `Bearer ${token}` };
  const urls = list.map(urlOf);
  const times = list.map(() => [] as number[]);
  const records = list.map(() => 0);
  for (let round = -30; round < SAMPLES; round++) {
    for (let c = 0; c < list.length; c++) {
      const t0 = performance.now();
      const res = await fetch(urls[c], { headers });
      const body = (await res.json()) as { records: unknown[] };
      const elapsed = performance.now() - t0;
      if (res.status !== 200) throw new Error(`${list[c].name}: HTTP ${res.status}`);
      if (round >= 0) times[c].push(elapsed); // the first 30 rounds warm up
      records[c] = body.records.length;
    }
  }
  return new Map(
    list.map((s, c) => {
      const sorted = times[c].sort((a, b) => a - b);
      return [s.name, { p50: percentile(sorted, 50), p99: percentile(sorted, 99), records: records[c] }];
    }),
  );
}

const results = await measureAll(scenarios);

console.log(
  `\n${RECORDS} published records, ${PAST_MOVES} + ${MOVES} republications before + after the deep cursors' asOf, limit ${LIMIT}, ${SAMPLES} sequential requests per case, round-robin over the cases (ms)`,
);
console.log('case'.padEnd(38), 'p50'.padStart(8), 'p99'.padStart(8), 'records'.padStart(8));
for (const [name, r] of results)
  console.log(name.padEnd(38), r.p50.toFixed(2).padStart(8), r.p99.toFixed(2).padStart(8), String(r.records).padStart(8));
for (const [label, first, deep] of [
  ['no filter', scenarios[0], scenarios[1]],
  ['two filters', scenarios[2], scenarios[3]],
  ['selective filters', scenarios[4], scenarios[5]],
] as const) {
  const f = results.get(first.name)!;
  const d = results.get(deep.name)!;
  console.log(`deep/first ${label}: p50 ${(d.p50 / f.p50).toFixed(2)}, p99 ${(d.p99 / f.p99).toFixed(2)} (target ≤ 1.5)`);
}

console.log('\nEXPLAIN (ANALYZE, BUFFERS) of each page query:');
for (const s of scenarios) {
  const { sql, bindings } = pageQuery(svc.db, s.listing, LIMIT + 1, s.after).toSQL();
  const plan = await svc.db.raw(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, bindings as Knex.RawBinding[]);
  console.log(`\n-- ${s.name}`);
  for (const row of plan.rows as Array<{ 'QUERY PLAN': string }>) console.log(row['QUERY PLAN']);
}

await web.close();
await svc.close();
