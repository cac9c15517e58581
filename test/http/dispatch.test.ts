import { expect } from 'chai';
import type { Context } from 'koa';
import { RouteTable } from '../../src/http/dispatch.ts';
import { sharedServer, type TestServer } from '../support/server.ts';
import { request } from '../support/http.ts';
import { listenerFixture } from '../support/factories.ts';

/** Runs the table's middleware on a minimal context; returns which route answered (or 'next') and the params. */
async function dispatch(table: RouteTable, method: string, path: string): Promise<{ hit: string; params?: Record<string, string> }> {
  const ctx = { method, path } as unknown as Context & { params?: Record<string, string> };
  let hit = 'next';
  const answered = await table.middleware()(ctx, async () => {
    hit = 'next';
  });
  if (answered !== undefined) hit = answered as string;
  return { hit, params: hit === 'next' ? undefined : ctx.params };
}

describe('listener route table (dispatch.ts)', () => {
  const table = new RouteTable();
  for (const [method, path] of [
    ['get', '/api/v1/stations/{stationSlug}'],
    ['get', '/api/v1/stations/{stationSlug}/content/{id}'],
    ['get', '/api/v1/stations/{stationSlug}/content/{type}/by-slug/{slug}'],
    ['get', '/api/v1/stations/{stationSlug}/schedule'],
    ['get', '/api/v1/stations/{stationSlug}/schedule.ics'],
    ['post', '/api/v1/stations/{stationSlug}/graphql'],
    ['get', '/api/v1/stations/{stationSlug}/{anything}'],
  ] as const) {
    table.add(method, path, async () => `${method.toUpperCase()} ${path}` as never);
  }

  it('matches literal segments and binds parameters', async () => {
    expect(await dispatch(table, 'GET', '/api/v1/stations/radio-one/content/abc')).to.deep.equal({
      hit: 'GET /api/v1/stations/{stationSlug}/content/{id}',
      params: { stationSlug: 'radio-one', id: 'abc' },
    });
    expect((await dispatch(table, 'GET', '/api/v1/stations/radio-one/content/news/by-slug/hello')).params).to.deep.equal({
      stationSlug: 'radio-one',
      type: 'news',
      slug: 'hello',
    });
  });

  it('prefers a literal segment over a parameter in the same place', async () => {
    expect((await dispatch(table, 'GET', '/api/v1/stations/x1y/schedule.ics')).hit).to.equal(
      'GET /api/v1/stations/{stationSlug}/schedule.ics',
    );
    expect((await dispatch(table, 'GET', '/api/v1/stations/x1y/schedule')).hit).to.equal('GET /api/v1/stations/{stationSlug}/schedule');
    expect((await dispatch(table, 'GET', '/api/v1/stations/x1y/other')).hit).to.equal('GET /api/v1/stations/{stationSlug}/{anything}');
  });

  it('answers HEAD with the GET route, ignores one trailing slash and checks the method', async () => {
    expect((await dispatch(table, 'HEAD', '/api/v1/stations/radio-one')).hit).to.equal('GET /api/v1/stations/{stationSlug}');
    expect((await dispatch(table, 'GET', '/api/v1/stations/radio-one/')).hit).to.equal('GET /api/v1/stations/{stationSlug}');
    expect((await dispatch(table, 'GET', '/api/v1/stations/radio-one/schedule//')).hit).to.equal('next');
    expect((await dispatch(table, 'POST', '/api/v1/stations/radio-one')).hit).to.equal('next');
    expect((await dispatch(table, 'POST', '/api/v1/stations/radio-one/graphql')).hit).to.equal(
      'POST /api/v1/stations/{stationSlug}/graphql',
    );
    expect((await dispatch(table, 'DELETE', '/api/v1/stations/radio-one')).hit).to.equal('next');
  });

  it('never matches an empty segment and passes unknown paths on', async () => {
    expect((await dispatch(table, 'GET', '/api/v1/stations//content/abc')).hit).to.equal('next');
    expect((await dispatch(table, 'GET', '/api/v1/stations/radio-one/content/a/b/c/d')).hit).to.equal('next');
    expect((await dispatch(table, 'GET', '/api/v2/stations/radio-one')).hit).to.equal('next');
  });

  it('percent-decodes parameters, keeping a malformed escape as sent', async () => {
    expect((await dispatch(table, 'GET', '/api/v1/stations/radio-one/content/a%20b%2Fc')).params?.id).to.equal('a b/c');
    expect((await dispatch(table, 'GET', '/api/v1/stations/radio-one/content/100%')).params?.id).to.equal('100%');
  });

  describe('over HTTP', () => {
    let server: TestServer;
    let slug: string;
    let token: string;
    before(async () => {
      server = await sharedServer();
      ({
        station: { slug },
        token,
      } = await listenerFixture(server.url));
    });

    it('serves HEAD and a trailing slash like GET, with the envelope headers on 200, 304 and errors', async () => {
      const get = await request(server.url, 'GET', `/api/v1/stations/${slug}/`, { token });
      expect(get.status).to.equal(200);
      expect(get.body.slug).to.equal(slug);
      const head = await request(server.url, 'HEAD', `/api/v1/stations/${slug}`, { token });
      expect(head.status).to.equal(200);
      expect(head.text).to.equal('');
      expect(head.headers.get('etag')).to.equal(get.headers.get('etag'));
      const notModified = await request(server.url, 'GET', `/api/v1/stations/${slug}`, {
        token,
        headers: { 'if-none-match': get.headers.get('etag')! },
      });
      const unknownRoute = await request(server.url, 'GET', `/api/v1/stations/${slug}/nothing/here`, { token });
      expect(unknownRoute.status).to.equal(404);
      expect(unknownRoute.body.error.code).to.equal('NOT_FOUND');
      for (const res of [get, head, notModified, unknownRoute]) {
        expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
        expect(res.headers.get('access-control-allow-origin')).to.equal('*');
        expect(res.headers.get('access-control-expose-headers')).to.include('ETag');
        expect(res.headers.get('cache-control')).to.equal('no-store');
      }
    });
  });
});
