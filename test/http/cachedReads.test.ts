import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { buildApp } from '../../src/http/app.ts';
import { allRoutes } from '../../src/routes.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { admin, request } from '../support/http.ts';
import { createToken, listenerFixture } from '../support/factories.ts';

// Listener reads already in the read cache are answered before Koa (src/http/cachedReads.ts). These
// tests count the requests Koa saw, and hold the answers to be the ones Koa gives: same bytes, headers,
// gates and errors.

/** The web app on `server`'s services, on a port of its own, counting the requests that reached Koa. */
async function countingApp(server: TestServer): Promise<{ url: string; koaRequests(): number; close(): Promise<void> }> {
  const app = buildApp(server.svc, allRoutes);
  let count = 0;
  const createContext = app.koa.createContext.bind(app.koa);
  app.koa.createContext = ((req: IncomingMessage, res: ServerResponse) => {
    count++;
    return createContext(req, res);
  }) as typeof app.koa.createContext;
  const http: Server = createServer(app.handle);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    koaRequests: () => count,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}

/** A test server and a counting app on its services for the suite: call where the suite's before() would go. */
function useCountingApp(env: Record<string, string> = {}): { server: TestServer; app: Awaited<ReturnType<typeof countingApp>> } {
  const suite = {} as { server: TestServer; app: Awaited<ReturnType<typeof countingApp>> };
  before(async () => {
    suite.server = await startTestServer({ env });
    suite.app = await countingApp(suite.server);
  });
  after(async () => {
    await suite.app.close();
    await suite.server.close();
  });
  return suite;
}

const ENVELOPE = [
  'access-control-allow-origin',
  'access-control-expose-headers',
  'cache-control',
  'etag',
  'content-type',
  'content-length',
];

describe('listener reads from the read cache, before Koa', () => {
  const suite = useCountingApp();

  it('a repeated read is answered without Koa, with the same bytes and headers; a 304 too, and HEAD', async () => {
    const { station, token } = await listenerFixture(suite.server.url);
    for (const path of [`/api/v1/stations/${station.slug}`, `/api/v1/stations/${station.slug}/schedule`]) {
      const first = await request(suite.app.url, 'GET', path, { token, headers: { 'x-request-id': 'first-1' } });
      expect(first.status, path).to.equal(200);
      const before = suite.app.koaRequests();
      const again = await request(suite.app.url, 'GET', path, { token, headers: { 'x-request-id': 'again-2' } });
      expect(suite.app.koaRequests(), `${path}: Koa saw the repeated read`).to.equal(before);
      expect(again.status).to.equal(200);
      expect(again.text).to.equal(first.text);
      for (const name of ENVELOPE) expect(again.headers.get(name), `${path} ${name}`).to.equal(first.headers.get(name));
      expect(again.headers.get('x-request-id')).to.equal('again-2');
      const fresh = await request(suite.app.url, 'GET', path, { token });
      expect(fresh.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
      const notModified = await request(suite.app.url, 'GET', path, { token, headers: { 'if-none-match': first.headers.get('etag')! } });
      expect(notModified.status).to.equal(304);
      expect(notModified.text).to.equal('');
      expect(notModified.headers.get('etag')).to.equal(first.headers.get('etag'));
      const head = await request(suite.app.url, 'HEAD', path, { token });
      expect(head.status).to.equal(200);
      expect(head.text).to.equal('');
      expect(head.headers.get('content-length')).to.equal(first.headers.get('content-length'));
      expect(suite.app.koaRequests(), path).to.equal(before);
    }
  });

  it('whatever a gate would refuse goes to Koa, with its answer: no 304 before the credential', async () => {
    const { station, token } = await listenerFixture(suite.server.url);
    const other = await listenerFixture(suite.server.url);
    const path = `/api/v1/stations/${station.slug}/schedule`;
    const first = await request(suite.app.url, 'GET', path, { token });
    const etag = first.headers.get('etag')!;
    const pushToken = (await createToken(suite.server.url, station.id, ['push:register'])).token;
    for (const [what, options] of [
      ['no credential', { headers: { 'if-none-match': etag } }],
      ['another station’s credential', { token: other.token, headers: { 'if-none-match': etag } }],
      ['another scope', { token: pushToken, headers: { 'if-none-match': etag } }],
      ['the raw token without Bearer', { headers: { authorization: token, 'if-none-match': etag } }],
      // The cached path takes `Bearer ` and a token of the tokens' length without the gate's regular
      // expression: whatever the gate refuses must still reach it.
      ['a lower-case scheme', { headers: { authorization: `bearer ${token}`, 'if-none-match': etag } }],
      ['a tab for the space', { headers: { authorization: `Bearer\t${token}`, 'if-none-match': etag } }],
      ['two spaces', { headers: { authorization: `Bearer  ${token}`, 'if-none-match': etag } }],
      [
        'a space inside the token, at its length',
        { headers: { authorization: `Bearer ${token.slice(0, 20)} ${token.slice(21)}`, 'if-none-match': etag } },
      ],
    ] as const) {
      const before = suite.app.koaRequests();
      const refused = await request(suite.app.url, 'GET', path, options);
      expect(refused.status, what).to.equal(401);
      expect(refused.body.error.code, what).to.equal('UNAUTHENTICATED');
      expect(suite.app.koaRequests(), what).to.equal(before + 1);
    }
    await admin(suite.server.url, 'PATCH', `/stations/${station.id}`, { modules: { schedule: false } });
    const disabled = await request(suite.app.url, 'GET', path, { token });
    expect(disabled.status).to.equal(404);
    expect(disabled.body.error.code).to.equal('MODULE_DISABLED');
    const unknownQuery = await request(suite.app.url, 'GET', `/api/v1/stations/${station.slug}?nope=1`, { token });
    expect(unknownQuery.status).to.equal(400);
  });

  it('a revoked credential is refused on the next read, though the answer is cached', async () => {
    const { station } = await listenerFixture(suite.server.url);
    const { token, id } = await createToken(suite.server.url, station.id, ['listener:read']);
    const path = `/api/v1/stations/${station.slug}`;
    expect((await request(suite.app.url, 'GET', path, { token })).status).to.equal(200);
    expect((await request(suite.app.url, 'GET', path, { token })).status).to.equal(200);
    expect((await admin(suite.server.url, 'DELETE', `/stations/${station.id}/credentials/${id}`)).status).to.be.oneOf([200, 204]);
    expect((await request(suite.app.url, 'GET', path, { token })).status).to.equal(401);
  });
});

describe('listener reads from the read cache: the rate limit still counts', () => {
  const suite = useCountingApp({ RATE_LIMIT_LISTENER_PER_MINUTE: '3' });

  it('takes a token per cached read, and answers 429 in the error body with Retry-After and RateLimit headers', async () => {
    const { station, token } = await listenerFixture(suite.server.url);
    const path = `/api/v1/stations/${station.slug}`;
    const first = await request(suite.app.url, 'GET', path, { token });
    expect(first.status).to.equal(200);
    expect(first.headers.get('ratelimit')).to.match(/^"listener";r=2;t=\d+$/);
    const before = suite.app.koaRequests();
    const second = await request(suite.app.url, 'GET', path, { token });
    expect(second.status).to.equal(200);
    expect(second.headers.get('ratelimit')).to.match(/^"listener";r=1;t=\d+$/);
    expect(second.headers.get('ratelimit-policy')).to.equal('"listener";q=3;w=60');
    expect((await request(suite.app.url, 'GET', path, { token })).status).to.equal(200);
    const refused = await request(suite.app.url, 'GET', path, { token, headers: { 'x-request-id': 'limited-1' } });
    expect(suite.app.koaRequests(), 'the cached reads and the refusal did not reach Koa').to.equal(before);
    expect(refused.status).to.equal(429);
    expect(refused.body).to.deep.equal({ error: { code: 'RATE_LIMITED', message: refused.body.error.message, requestId: 'limited-1' } });
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    expect(refused.headers.get('ratelimit')).to.match(/^"listener";r=0;t=\d+$/);
    expect(refused.headers.get('cache-control')).to.equal('no-store');
    expect(refused.headers.get('etag')).to.equal(null);
    expect(refused.headers.get('access-control-allow-origin')).to.equal('*');
    // Koa's answer to the same refusal is the same.
    const viaKoa = await request(suite.server.url, 'GET', `/api/v1/stations/${station.slug}/schedule`, {
      token,
      headers: { 'x-request-id': 'limited-2' },
    });
    expect(viaKoa.status).to.equal(429);
    expect(Object.keys(viaKoa.body.error)).to.deep.equal(Object.keys(refused.body.error));
    expect(viaKoa.body.error.message).to.equal(refused.body.error.message);
  });
});

describe('GraphQL queries over GET from the read cache, before Koa', () => {
  const suite = useCountingApp();
  const HEADERS = ['access-control-allow-origin', 'access-control-expose-headers', 'cache-control', 'content-type', 'content-length'];

  it('a repeated query is answered without Koa with the same bytes and headers; what would differ goes to Koa', async () => {
    const { station, token } = await listenerFixture(suite.server.url);
    const path = `/api/v1/stations/${station.slug}/graphql?query=${encodeURIComponent('{ station { name } currentBroadcast { asOf } }')}`;
    const first = await request(suite.app.url, 'GET', path, { token, headers: { 'x-request-id': 'gql-1' } });
    expect(first.status).to.equal(200);
    expect(first.body.data.station.name).to.equal(station.name);
    const before = suite.app.koaRequests();
    const again = await request(suite.app.url, 'GET', path, { token, headers: { 'x-request-id': 'gql-2' } });
    expect(suite.app.koaRequests(), 'Koa saw the repeated query').to.equal(before);
    expect(again.status).to.equal(200);
    expect(again.text).to.equal(first.text);
    for (const name of HEADERS) expect(again.headers.get(name), name).to.equal(first.headers.get(name));
    expect(again.headers.get('etag')).to.equal(null);
    expect(again.headers.get('x-request-id')).to.equal('gql-2');

    // Another Accept was not negotiated yet; a browser gets GraphiQL; HEAD and a missing credential are Koa's.
    for (const [what, options, status] of [
      ['another Accept', { token, headers: { accept: 'application/json' } }, 200],
      ['a browser', { token, headers: { accept: 'text/html' } }, 200],
      ['no credential', {}, 401],
      ['another station’s credential', { token: (await listenerFixture(suite.server.url)).token }, 401],
    ] as const) {
      const count = suite.app.koaRequests();
      const reply = await request(suite.app.url, 'GET', path, options);
      expect(reply.status, what).to.equal(status);
      expect(suite.app.koaRequests(), what).to.equal(count + 1);
      if (what === 'a browser') expect(reply.headers.get('content-type'), what).to.match(/^text\/html/);
    }
    // Each Accept then has its own answer in memory, whichever the URL was last asked with.
    const other = 'application/graphql-response+json';
    const asOther = await request(suite.app.url, 'GET', path, { token, headers: { accept: other } });
    for (const accept of ['*/*', other, '*/*', other]) {
      const count = suite.app.koaRequests();
      const reply = await request(suite.app.url, 'GET', path, { token, headers: { accept } });
      expect(suite.app.koaRequests(), accept).to.equal(count);
      expect(reply.headers.get('content-type'), accept).to.equal((accept === '*/*' ? first : asOther).headers.get('content-type'));
    }
    expect(asOther.headers.get('content-type')).to.not.equal(first.headers.get('content-type'));
    const head = suite.app.koaRequests();
    await request(suite.app.url, 'HEAD', path, { token });
    expect(suite.app.koaRequests(), 'HEAD').to.equal(head + 1);

    // A write shows on the next query.
    expect((await admin(suite.server.url, 'PATCH', `/stations/${station.id}`, { name: 'Renamed FM' })).status).to.equal(200);
    const renamed = await request(suite.app.url, 'GET', path, { token });
    expect(renamed.body.data.station.name).to.equal('Renamed FM');
    await admin(suite.server.url, 'PATCH', `/stations/${station.id}`, { modules: { graphql: false } });
    const disabled = await request(suite.app.url, 'GET', path, { token });
    expect(disabled.status).to.equal(404);
    expect(disabled.body.error.code).to.equal('MODULE_DISABLED');
  });
});

describe('GraphQL queries from the read cache: the GraphQL rate limit still counts', () => {
  const suite = useCountingApp({ RATE_LIMIT_GRAPHQL_PER_MINUTE: '2' });

  it('takes a GraphQL token per cached query and answers 429 without Koa', async () => {
    const { station, token } = await listenerFixture(suite.server.url);
    const path = `/api/v1/stations/${station.slug}/graphql?query=${encodeURIComponent('{ station { slug } }')}`;
    const first = await request(suite.app.url, 'GET', path, { token });
    expect(first.status).to.equal(200);
    const before = suite.app.koaRequests();
    const second = await request(suite.app.url, 'GET', path, { token });
    expect(second.status).to.equal(200);
    expect(second.headers.get('ratelimit')).to.match(/^"graphql";r=0;t=\d+$/);
    const refused = await request(suite.app.url, 'GET', path, { token });
    expect(suite.app.koaRequests(), 'the cached query and the refusal did not reach Koa').to.equal(before);
    expect(refused.status).to.equal(429);
    expect(refused.body.error.code).to.equal('RATE_LIMITED');
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    // The listener limit is another bucket: a REST read still passes.
    expect((await request(suite.app.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status).to.equal(200);
  });
});
