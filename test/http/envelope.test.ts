import { expect } from 'chai';
import Koa from 'koa';
import { Router } from '@koa/router';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sharedServer, startTestServer, type TestServer } from '../support/server.ts';
import { admin, request } from '../support/http.ts';
import { createToken, eventually, listenerFixture } from '../support/factories.ts';
import { envelope } from '../../src/http/envelope.ts';
import { defineRoute, mountRoute } from '../../src/http/route.ts';
import { StationSlugParams, StringEnum, Type } from '../../src/http/schema.ts';
import { strongEtag } from '../../src/http/etag.ts';

describe('listener envelope', () => {
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
  const path = () => `/api/v1/stations/${slug}`;

  it('sets x-request-id on every response, keeping a sane incoming one', async () => {
    const generated = await request(server.url, 'GET', path(), { token });
    expect(generated.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const kept = await request(server.url, 'GET', path(), { token, headers: { 'x-request-id': 'lb-abc.123' } });
    expect(kept.headers.get('x-request-id')).to.equal('lb-abc.123');
    const insane = await request(server.url, 'GET', path(), { token, headers: { 'x-request-id': 'a b<script>' } });
    expect(insane.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const missing = await request(server.url, 'GET', '/nope');
    expect(missing.headers.get('x-request-id')).to.be.a('string');
    expect(missing.body.error.requestId).to.equal(missing.headers.get('x-request-id'));
  });

  it('answers CORS preflight without credentials and exposes the headers clients need', async () => {
    const res = await request(server.url, 'OPTIONS', path(), {
      headers: {
        origin: 'https://player.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, if-none-match',
      },
    });
    expect(res.status).to.equal(204);
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    expect(res.headers.get('access-control-allow-headers')).to.match(/authorization/i);
    expect(res.headers.get('access-control-allow-methods')).to.include('GET');
    const get = await request(server.url, 'GET', path(), { token });
    expect(get.headers.get('access-control-allow-origin')).to.equal('*');
    expect(get.headers.get('access-control-expose-headers')).to.include('ETag').and.include('X-Request-Id');
  });

  it('sends Cache-Control: no-store and a strong SHA-256 ETag of the exact body bytes', async () => {
    const res = await request(server.url, 'GET', path(), { token });
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('etag')).to.equal(strongEtag(Buffer.from(res.text)));
    expect(res.headers.get('etag')).to.match(/^"[0-9a-f]{64}"$/);
  });

  it('refuses an unknown query parameter with 400 VALIDATION_ERROR on every listener read, those without parameters too', async () => {
    // (weather and traffic are off on this station: their module gate answers first, 404.)
    for (const read of [
      '',
      '/now-playing',
      '/broadcast/current',
      '/track-history',
      '/schedule',
      `/content/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`,
    ]) {
      const res = await request(server.url, 'GET', `${path()}${read}?foo=1`, { token });
      expect(res.status, read).to.equal(400);
      expect(res.body.error.code, read).to.equal('VALIDATION_ERROR');
      expect(res.body.error.issues[0], read).to.include({ code: 'unknown_property' });
    }
    expect((await request(server.url, 'GET', `${path()}/now-playing`, { token })).status).to.equal(200);
  });

  it('answers 304 with no body for a matching If-None-Match (single, list, weak form and *)', async () => {
    const first = await request(server.url, 'GET', path(), { token });
    const etag = first.headers.get('etag')!;
    for (const header of [etag, `"nope", ${etag}`, `W/${etag}`, '*']) {
      const res = await request(server.url, 'GET', path(), { token, headers: { 'if-none-match': header } });
      expect(res.status, header).to.equal(304);
      expect(res.text).to.equal('');
      expect(res.headers.get('etag')).to.equal(etag);
    }
    const stale = await request(server.url, 'GET', path(), { token, headers: { 'if-none-match': '"other"' } });
    expect(stale.status).to.equal(200);
  });

  it('authenticates before a 304', async () => {
    const first = await request(server.url, 'GET', path(), { token });
    const res = await request(server.url, 'GET', path(), { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(res.status).to.equal(401);
  });

  it('changes the ETag when the document changes', async () => {
    const { station, token: own } = await listenerFixture(server.url);
    const before = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token: own });
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { name: 'Renamed FM' });
    const after = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, {
      token: own,
      headers: { 'if-none-match': before.headers.get('etag')! },
    });
    expect(after.status).to.equal(200);
    expect(after.body.name).to.equal('Renamed FM');
  });

  it('gives unknown routes the error body', async () => {
    const res = await request(server.url, 'GET', '/api/v1/nothing-here');
    expect(res.status).to.equal(404);
    expect(res.body.error).to.include({ code: 'NOT_FOUND' });
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
  });

  it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
    const res = await request(server.url, 'POST', '/admin/v1/stations', {
      token: 'test-admin-token-0123456789',
      headers: { 'content-type': 'application/json' },
      body: '{"slug": "abc",',
    });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
  });

  it('answers wrong types, oversized values and unknown fields with 400 and issues, storing nothing', async () => {
    const res = await admin(server.url, 'POST', '/stations', { slug: 'x'.repeat(64), name: 42, timezone: 'Europe/Berlin', colour: 'red' });
    expect(res.status).to.equal(400);
    const paths = [...new Set(res.body.error.issues.map((i: { path: string }) => i.path))].sort();
    expect(paths).to.deep.equal(['colour', 'name', 'slug']);
    const tz = await admin(server.url, 'POST', '/stations', { slug: 'valid-slug-tz', name: 'x', timezone: 'Mars/Olympus' });
    expect(tz.status).to.equal(400);
    expect(tz.body.error.issues[0].path).to.equal('timezone');
    expect(await server.svc.db('stations').where({ slug: 'valid-slug-tz' }).first()).to.equal(undefined);
  });

  it('suggests a close valid value', async () => {
    const { station } = await listenerFixture(server.url);
    const res = await admin(server.url, 'PATCH', `/stations/${station.id}`, { push: { provider: 'fcn' }, artworkLookp: true });
    expect(res.status).to.equal(400);
    const byPath = Object.fromEntries(res.body.error.issues.map((i: { path: string }) => [i.path, i]));
    expect(byPath['push.provider'].suggestion).to.equal('fcm');
    expect(byPath['artworkLookp'].suggestion).to.equal('artworkLookup');
  });

  it('a duplicate slug is 409 and keeps the first station intact', async () => {
    const { station } = await listenerFixture(server.url);
    const res = await admin(server.url, 'POST', '/stations', { slug: station.slug, name: 'Other', timezone: 'UTC' });
    expect(res.status).to.equal(409);
    expect(res.body.error.issues[0].path).to.equal('slug');
    expect((await admin(server.url, 'GET', `/stations/${station.id}`)).body.name).to.equal('Test FM');
  });

  it('never leaks a stack or SQL in a 500', async () => {
    const broken = await startTestServer();
    const { station } = await listenerFixture(broken.url);
    await broken.svc.db.destroy();
    try {
      const res = await admin(broken.url, 'PATCH', `/stations/${station.id}`, { name: 'x' });
      expect(res.status).to.equal(500);
      expect(res.body.error).to.deep.equal({
        code: 'INTERNAL_ERROR',
        message: 'Internal server error.',
        requestId: res.headers.get('x-request-id'),
      });
    } finally {
      await broken.close().catch(() => undefined);
    }
  });

  describe('gate order on a module-gated route: station (404) → credential (401) → module (404 MODULE_DISABLED) → validation (400)', () => {
    let http: Server;
    let url: string;
    before(async () => {
      const app = new Koa();
      const router = new Router();
      mountRoute(
        router,
        defineRoute({
          method: 'get',
          path: '/api/v1/stations/{stationSlug}/probe',
          operationId: 'probe',
          summary: 'test route',
          tags: ['test'],
          surface: 'listener',
          station: 'slug',
          scope: 'listener:read',
          module: 'schedule',
          params: StationSlugParams,
          query: Type.Object({ sort: Type.Optional(StringEnum(['publishedAt', 'updatedAt'])) }, { additionalProperties: false }),
          responses: {},
          handler: ({ query }) => ({ ok: true, sort: query.sort ?? null }),
        }),
        server.svc,
      );
      app.use(envelope(server.svc.logger)).use(router.routes());
      http = createServer(app.callback()).listen(0);
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => http.close(() => resolve())));

    it('applies each gate in turn', async () => {
      const { station, token } = await listenerFixture(server.url);
      const other = await listenerFixture(server.url);
      const probe = `/api/v1/stations/${station.slug}/probe`;
      expect((await request(url, 'GET', '/api/v1/stations/unknown-one/probe', { token })).status).to.equal(404);
      expect((await request(url, 'GET', probe, { token: other.token })).status).to.equal(401);
      await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { schedule: false } });
      const disabled = await request(url, 'GET', `${probe}?sort=published`, { token });
      expect(disabled.status).to.equal(404);
      expect(disabled.body.error.code).to.equal('MODULE_DISABLED');
      expect((await request(url, 'GET', probe, { token: other.token })).status, 'credential before module').to.equal(401);
      await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { schedule: true } });
      const invalid = await request(url, 'GET', `${probe}?sort=published`, { token });
      expect(invalid.status).to.equal(400);
      expect(invalid.body.error.issues[0]).to.include({ path: 'sort', suggestion: 'publishedAt' });
      const unknownParam = await request(url, 'GET', `${probe}?srot=updatedAt`, { token });
      expect(unknownParam.status).to.equal(400);
      expect(unknownParam.body.error.issues[0]).to.include({ path: 'srot', suggestion: 'sort' });
      expect((await request(url, 'GET', `${probe}?sort=updatedAt`, { token })).body).to.deep.equal({ ok: true, sort: 'updatedAt' });
    });
  });

  it('rate limits per credential with RateLimit headers and Retry-After', async () => {
    const limited = await startTestServer({ env: { RATE_LIMIT_LISTENER_PER_MINUTE: '3' } });
    try {
      const { station, token } = await listenerFixture(limited.url);
      const path = `/api/v1/stations/${station.slug}`;
      const ok = await request(limited.url, 'GET', path, { token });
      expect(ok.headers.get('ratelimit-policy')).to.equal('"listener";q=3;w=60');
      expect(ok.headers.get('ratelimit')).to.match(/^"listener";r=2;t=\d+$/);
      await request(limited.url, 'GET', path, { token });
      await request(limited.url, 'GET', path, { token });
      const res = await request(limited.url, 'GET', path, { token });
      expect(res.status).to.equal(429);
      expect(res.body.error.code).to.equal('RATE_LIMITED');
      // A token bucket of 3 a minute has its next token within 20 s (a fixed window could say up to 60).
      expect(Number(res.headers.get('retry-after')))
        .to.be.greaterThan(0)
        .and.at.most(20);
      expect(res.headers.get('ratelimit')).to.equal(`"listener";r=0;t=${res.headers.get('retry-after')}`);
      const { token: second } = await createToken(limited.url, station.id);
      expect((await request(limited.url, 'GET', path, { token: second })).status, 'another credential has its own bucket').to.equal(200);
    } finally {
      await limited.close();
    }
  });

  it('refills the bucket continuously (token bucket): after a burst, one request per interval', async () => {
    const limited = await startTestServer({ env: { RATE_LIMIT_LISTENER_PER_MINUTE: '120' } }); // a token every 500 ms
    try {
      const { station, token } = await listenerFixture(limited.url);
      const path = `/api/v1/stations/${station.slug}`;
      const statuses = await Promise.all(
        Array.from({ length: 121 }, () => request(limited.url, 'GET', path, { token }).then((r) => r.status)),
      );
      expect(statuses.filter((s) => s === 200)).to.have.length(120);
      const refused = await request(limited.url, 'GET', path, { token });
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.equal('1');
      const ok = (await eventually(
        async () => {
          const res = await request(limited.url, 'GET', path, { token });
          return res.status === 200 ? res : null;
        },
        { timeoutMs: 5_000 },
      )) as Awaited<ReturnType<typeof request>>;
      expect(ok.headers.get('ratelimit')).to.match(/^"listener";r=0;t=(59|60)$/);
      expect((await request(limited.url, 'GET', path, { token })).status, 'one token came back, not the bucket').to.equal(429);
    } finally {
      await limited.close();
    }
  });
});
