import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { contentFixture, publish, published, putRecord, putType } from './helpers.ts';

describe('GET …/content/{id} and …/content/{type}/by-slug/{slug}', () => {
  const { clock, server } = useClockedServer('2026-11-21T12:00:00.000Z');

  it('by id: the published record; unknown, draft-only and another station’s record are 404', async () => {
    const a = await contentFixture(server);
    const b = await contentFixture(server);
    const id = await published(server.url, a.station.id, 'news', { title: 'A story' });
    const res = await a.get(`/content/${id}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id, type: 'news', contractVersion: 1 });
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect((await a.get(`/content/${id.toUpperCase()}`)).body.id, 'UUIDs compare case-insensitively').to.equal(id);
    expect((await a.get(`/content/${randomUUID()}`)).status).to.equal(404);
    const draft = randomUUID();
    await putRecord(server.url, a.station.id, draft, { type: 'news', values: { title: 'Draft' } });
    expect((await a.get(`/content/${draft}`)).status).to.equal(404);
    const other = await b.get(`/content/${id}`);
    expect(other.status).to.equal(404);
    expect(other.body.error.code).to.equal('NOT_FOUND');
    expect((await b.get(`/content?type=news`)).body.records).to.deep.equal([]);
    expect((await request(server.url, 'GET', `${b.base}/content/${id}`, { token: a.token })).status, 'A’s credential on B').to.equal(401);
    expect((await request(server.url, 'GET', `${a.base}/content/${id}`)).status).to.equal(401);
  });

  it('by slug: the current slug and every slug the record was published with resolve to the current record', async () => {
    const { station, get } = await contentFixture(server);
    const id = randomUUID();
    await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'Launch', slug: 'launch' } });
    expect((await get('/content/news/by-slug/launch')).status, 'a draft slug does not resolve').to.equal(404);
    await publish(server.url, station.id, id);
    expect((await get('/content/news/by-slug/launch')).body.id).to.equal(id);
    await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'Launch', slug: 'draft-only-slug' } });
    await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'Launch day', slug: 'launch-day' } });
    await publish(server.url, station.id, id);
    const current = await get('/content/news/by-slug/launch-day');
    const former = await get('/content/news/by-slug/launch');
    expect(current.status).to.equal(200);
    expect(former.status).to.equal(200);
    expect(former.body).to.deep.equal(current.body);
    expect(former.body.values.slug).to.equal('launch-day');
    expect((await get('/content/news/by-slug/draft-only-slug')).status, 'only published slugs').to.equal(404);
    expect((await get('/content/news/by-slug/unknown')).status).to.equal(404);
    await putType(server.url, station.id, 'show', [
      { key: 'title', label: 'T', kind: 'text' },
      { key: 'slug', label: 'S', kind: 'text' },
    ]);
    expect((await get('/content/show/by-slug/launch')).status, 'slugs are per type').to.equal(404);
    await admin(server.url, 'POST', `/stations/${station.id}/records/${id}/unpublish`);
    expect((await get('/content/news/by-slug/launch')).status).to.equal(404);
    expect((await get('/content/news/by-slug/launch-day')).status).to.equal(404);
  });

  /** `older` published as `weekly`, then renamed to `weekly-2025`; a second later `newer` takes `weekly`. */
  async function slugTakenOver() {
    const fixture = await contentFixture(server);
    const stationId = fixture.station.id;
    const older = await published(server.url, stationId, 'news', { title: 'Old', slug: 'weekly' });
    await putRecord(server.url, stationId, older, { type: 'news', values: { title: 'Old', slug: 'weekly-2025' } });
    await publish(server.url, stationId, older);
    clock.advance(1000);
    const newer = await published(server.url, stationId, 'news', { title: 'New', slug: 'weekly' });
    return { ...fixture, older, newer };
  }

  it('by slug: when two records used the same slug the newest use wins', async () => {
    const { get, older, newer } = await slugTakenOver();
    expect((await get('/content/news/by-slug/weekly')).body.id).to.equal(newer);
    expect((await get('/content/news/by-slug/weekly-2025')).body.id).to.equal(older);
  });

  it('by slug: a slug resolves while any published record of the type ever used it (the taker unpublished or deleted)', async () => {
    // Contract: "a slug the record used before also resolves"; GraphQL contentBySlug is NOT_FOUND only
    // "when no published record of that type ever used the slug".
    const { station, get, older, newer } = await slugTakenOver();
    expect((await get('/content/news/by-slug/weekly')).body.id).to.equal(newer);
    await admin(server.url, 'POST', `/stations/${station.id}/records/${newer}/unpublish`);
    const fallback = await get('/content/news/by-slug/weekly');
    expect(fallback.status, 'the older record used the slug and is published').to.equal(200);
    expect(fallback.body.id).to.equal(older);
    expect(fallback.body.values.slug).to.equal('weekly-2025');
    clock.advance(1000);
    await publish(server.url, station.id, newer);
    expect((await get('/content/news/by-slug/weekly')).body.id, 'the newest use wins again').to.equal(newer);
    await admin(server.url, 'DELETE', `/stations/${station.id}/records/${newer}`);
    expect((await get('/content/news/by-slug/weekly')).body.id).to.equal(older);
    await admin(server.url, 'POST', `/stations/${station.id}/records/${older}/unpublish`);
    expect((await get('/content/news/by-slug/weekly')).status, 'no published record used it').to.equal(404);
  });

  it('slugs with spaces and unicode resolve through percent-encoding', async () => {
    const { station, get } = await contentFixture(server);
    const id = await published(server.url, station.id, 'news', { title: 'Café', slug: 'café au lait' });
    expect((await get(`/content/news/by-slug/${encodeURIComponent('café au lait')}`)).body.id).to.equal(id);
  });

  it('answers 304 to If-None-Match on record by id and by slug, and 200 with a new ETag after republishing', async () => {
    const { station, get } = await contentFixture(server);
    const id = await published(server.url, station.id, 'news', { title: 'Tagged', slug: 'tagged' });
    for (const path of [`/content/${id}`, '/content/news/by-slug/tagged']) {
      const first = await get(path);
      const etag = first.headers.get('etag') as string;
      expect(etag).to.match(/^"[0-9a-f]{64}"$/);
      const cached = await get(path, { 'if-none-match': etag });
      expect(cached.status).to.equal(304);
      expect(cached.text).to.equal('');
      expect((await get(path, { 'if-none-match': `"nope", ${etag}` })).status, 'a list of tags').to.equal(304);
      expect(
        (await request(server.url, 'GET', `/api/v1/stations/${station.slug}${path}`, { headers: { 'if-none-match': etag } })).status,
        'auth before 304',
      ).to.equal(401);
    }
    const etag = (await get(`/content/${id}`)).headers.get('etag') as string;
    clock.advance(1000);
    await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'Tagged again', slug: 'tagged' } });
    await publish(server.url, station.id, id);
    const changed = await get(`/content/${id}`, { 'if-none-match': etag });
    expect(changed.status).to.equal(200);
    expect(changed.headers.get('etag')).not.to.equal(etag);
  });

  it('the content module switch and station offline apply on the next read', async () => {
    const { station, get } = await contentFixture(server);
    const id = await published(server.url, station.id, 'news', { title: 'Switchable', slug: 'switchable' });
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { content: false } });
    for (const path of ['/content?type=news', `/content/${id}`, '/content/news/by-slug/switchable']) {
      const res = await get(path);
      expect(res.status, path).to.equal(404);
      expect(res.body.error.code).to.equal('MODULE_DISABLED');
    }
    expect((await get('/schemas')).status, 'schemas has its own switch').to.equal(200);
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { content: true } });
    expect((await get(`/content/${id}`)).status).to.equal(200);
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { publicOnline: false });
    const offline = await get(`/content/${id}`);
    expect(offline.status).to.equal(404);
    expect(offline.body.error.code).to.equal('NOT_FOUND');
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { publicOnline: true });
    expect((await get(`/content/${id}`)).status).to.equal(200);
  });

  it('the OpenAPI document describes the content routes', async () => {
    const res = await request(server.url, 'GET', '/openapi.json');
    const paths = Object.keys(res.body.paths);
    expect(paths).to.include.members([
      '/api/v1/stations/{stationSlug}/schemas',
      '/api/v1/stations/{stationSlug}/content',
      '/api/v1/stations/{stationSlug}/content/{id}',
      '/api/v1/stations/{stationSlug}/content/{type}/by-slug/{slug}',
      '/admin/v1/stations/{stationId}/content-types/{key}',
      '/admin/v1/stations/{stationId}/records/{recordId}',
    ]);
    const filter = res.body.paths['/api/v1/stations/{stationSlug}/content'].get.parameters.find(
      (p: { name: string }) => p.name === 'filter',
    );
    expect(filter).to.include({ in: 'query', style: 'form', explode: true });
  });
});
