import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { admin, request, type Reply } from '../../support/http.ts';
import { listenerFixture } from '../../support/factories.ts';
import type { TestServer } from '../../support/server.ts';
import { invalidateReads } from '../../../src/lib/readCache.ts';

// Content through the admin API, the way the editorial system loads it.

export const NEWS_FIELDS = [
  { key: 'title', label: 'Title', kind: 'text', required: true, maxLength: 120 },
  { key: 'slug', label: 'Slug', kind: 'text' },
  { key: 'summary', label: 'Summary', kind: 'rich_text' },
  {
    key: 'category',
    label: 'Category',
    kind: 'choices',
    choices: [
      { key: 'music', label: 'Music' },
      { key: 'local', label: 'Local' },
      { key: 'sport', label: 'Sport' },
    ],
  },
  {
    key: 'tags',
    label: 'Tags',
    kind: 'choices',
    multiple: true,
    maxItems: 3,
    choices: [
      { key: 'live', label: 'Live' },
      { key: 'studio', label: 'Studio' },
      { key: 'interview', label: 'Interview' },
      { key: 'festival', label: 'Festival' },
    ],
  },
  { key: 'rating', label: 'Rating', kind: 'number', min: 0, max: 5 },
  { key: 'featured', label: 'Featured', kind: 'boolean' },
  { key: 'event_at', label: 'Event', kind: 'datetime' },
  { key: 'internal_note', label: 'Note', kind: 'text', private: true },
  { key: 'sync_id', label: 'Sync id', kind: 'text', system: true },
];

export async function putType(
  url: string,
  stationId: string,
  key: string,
  fields: unknown[] = NEWS_FIELDS,
  extra: Record<string, unknown> = {},
): Promise<Reply> {
  return admin(url, 'PUT', `/stations/${stationId}/content-types/${key}`, { label: key.toUpperCase(), fields, ...extra });
}

export async function putRecord(url: string, stationId: string, id: string, body: Record<string, unknown>): Promise<Reply> {
  return admin(url, 'PUT', `/stations/${stationId}/records/${id}`, body);
}

export async function publish(url: string, stationId: string, id: string, revision?: number): Promise<Reply> {
  return admin(url, 'POST', `/stations/${stationId}/records/${id}/publish`, revision === undefined ? {} : { revision });
}

/** Saves and publishes a record; returns its id. */
export async function published(
  url: string,
  stationId: string,
  type: string,
  values: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  id = randomUUID(),
): Promise<string> {
  const saved = await putRecord(url, stationId, id, { type, values, ...extra });
  expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
  const pub = await publish(url, stationId, id);
  expect(pub.status, JSON.stringify(pub.body)).to.equal(200);
  return id;
}

/** A station with a `news` type and a listener credential; `get` reads listener paths under the station. */
export async function contentFixture(server: TestServer, overrides: Record<string, unknown> = {}) {
  const { station, token } = await listenerFixture(server.url, overrides);
  const type = await putType(server.url, station.id, 'news');
  expect(type.status, JSON.stringify(type.body)).to.equal(200);
  const base = `/api/v1/stations/${station.slug}`;
  const get = (path: string, headers: Record<string, string> = {}) => request(server.url, 'GET', base + path, { token, headers });
  return { station, token, base, get };
}

/** Query string with repeated `filter` parameters. */
export function listPath(params: Record<string, string | number | undefined>, filters: string[] = []): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) search.append(k, String(v));
  for (const f of filters) search.append('filter', f);
  return `/content?${search.toString()}`;
}

/** Every record id of a listing, following nextCursor to the end. */
export async function walk(
  get: (path: string) => Promise<Reply>,
  params: Record<string, string | number | undefined>,
  filters: string[] = [],
  between?: (page: number) => Promise<void>,
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const res = await get(listPath({ ...params, cursor }, filters));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    ids.push(...res.body.records.map((r: { id: string }) => r.id));
    expect(res.body.page.nextCursor).to.equal(res.body.nextCursor);
    if (res.body.nextCursor === null) return ids;
    expect(res.body.nextCursor.length).to.be.within(1, 400);
    cursor = res.body.nextCursor;
    if (between) await between(page);
  }
  throw new Error('walk did not end');
}

/** A media version stored directly (the upload route belongs to the media issue); variants get rendition rows. */
export async function insertMedia(
  server: TestServer,
  stationId: string,
  options: { kind?: 'image' | 'audio'; variants?: string[]; alt?: string } = {},
): Promise<{ assetId: string; versionId: string }> {
  const kind = options.kind ?? 'image';
  const assetId = randomUUID();
  const versionId = randomUUID();
  const db = server.svc.db;
  await db('media_assets').insert({ id: assetId, station_id: stationId, kind });
  await db('media_versions').insert({
    id: versionId,
    asset_id: assetId,
    station_id: stationId,
    kind,
    mime: kind === 'image' ? 'image/jpeg' : 'audio/mpeg',
    alt: options.alt ?? (kind === 'image' ? 'A microphone' : ''),
    credits: 'Photo: Studio',
    width: kind === 'image' ? 1600 : null,
    height: kind === 'image' ? 900 : null,
    duration: kind === 'audio' ? 182.5 : null,
    size: 3,
    sha256: 'abc',
  });
  for (const variant of ['original', ...(options.variants ?? [])]) {
    await db('media_files').insert({ version_id: versionId, variant, mime: 'image/webp', size: 3, etag: '"x"', bytes: Buffer.from('abc') });
  }
  return { assetId, versionId };
}

/** Rewrites a published record's stored body as it was before image variants were always paths (null until rendered). */
export async function storeWithNullVariants(server: TestServer, recordId: string): Promise<void> {
  const { rows } = await server.svc.db.raw(
    `UPDATE published_records SET body = jsonb_set(body, '{media}', (SELECT jsonb_agg(m || '{"variants": {"thumb": null, "display": null, "card": null, "square": null}}'::jsonb) FROM jsonb_array_elements(body -> 'media') m)) WHERE record_id = ? RETURNING station_id`,
    [recordId],
  );
  // Written behind the API, so drop the cached reads as a write would.
  for (const { station_id } of rows as { station_id: string }[]) await invalidateReads(server.svc, station_id, 'content');
}
