import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { getIntrospectionQuery } from 'graphql';
import { sharedServer, startTestServer, type TestServer } from '../support/server.ts';
import { request, type Reply } from '../support/http.ts';
import { listenerFixture } from '../support/factories.ts';
import { gql, gqlGet } from './helpers.ts';

/** The error body of docs/errors.md#error-codes, with the request id of the response. */
function expectErrorBody(res: Reply, status: number, code: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.headers.get('content-type')).to.match(/^application\/json/);
  expect(res.body.error.code, res.text).to.equal(code);
  expect(res.body.error.message).to.be.a('string');
  expect(res.body.error.requestId).to.equal(res.headers.get('x-request-id'));
}

/** `{ __type(name: "Station") { ofType { … { name } } } }` nested `levels` deep. */
const nested = (levels: number): string => `__type(name: "Station") { ${'ofType { '.repeat(levels - 2)}name${' }'.repeat(levels - 2)} }`;

describe('GraphQL: every answer before the query runs uses the error body', () => {
  let server: TestServer;
  let slug: string;
  let token: string;
  const endpoint = () => `/api/v1/stations/${slug}/graphql`;
  before(async () => {
    server = await sharedServer();
    ({
      token,
      station: { slug },
    } = await listenerFixture(server.url));
  });

  it('an Accept it cannot serve is 406 NOT_ACCEPTABLE', async () => {
    const res = await request(server.url, 'POST', endpoint(), {
      token,
      json: { query: '{ station { id } }' },
      headers: { accept: 'text/html' },
    });
    expectErrorBody(res, 406, 'NOT_ACCEPTABLE');
    for (const accept of ['application/json;q=0', 'application/graphql-response+json; q=0.000, text/plain']) {
      const refused = await request(server.url, 'POST', endpoint(), { token, json: { query: '{ station { id } }' }, headers: { accept } });
      expectErrorBody(refused, 406, 'NOT_ACCEPTABLE');
    }
    const weighted = await request(server.url, 'POST', endpoint(), {
      token,
      json: { query: '{ station { id } }' },
      headers: { accept: 'application/json;q=0.5' },
    });
    expect(weighted.status, 'a weight above 0 still accepts').to.equal(200);
    const ok = await request(server.url, 'POST', endpoint(), {
      token,
      json: { query: '{ station { id } }' },
      headers: { accept: 'text/html, application/graphql-response+json' },
    });
    expect(ok.status).to.equal(200);
  });

  it('a body that is not application/json is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await request(server.url, 'POST', endpoint(), {
      token,
      body: '{ station { id } }',
      headers: { 'content-type': 'application/graphql', accept: 'application/json' },
    });
    expectErrorBody(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('malformed JSON, a missing query, variables that are no object, NUL in a variable are 400 VALIDATION_ERROR', async () => {
    const post = (body: string) =>
      request(server.url, 'POST', endpoint(), { token, body, headers: { 'content-type': 'application/json', accept: 'application/json' } });
    expectErrorBody(await post('{"query": '), 400, 'VALIDATION_ERROR');
    expectErrorBody(await post('{}'), 400, 'VALIDATION_ERROR');
    expectErrorBody(await post(''), 400, 'VALIDATION_ERROR');
    expectErrorBody(await post('[1]'), 400, 'VALIDATION_ERROR');
    expectErrorBody(await post('{"query": "{ station { id } }", "variables": [1]}'), 400, 'VALIDATION_ERROR');
    expectErrorBody(
      await post('{"query": "query R($id: String!) { contentRecord(id: $id) { id } }", "variables": {"id": "a\\u0000b"}}'),
      400,
      'VALIDATION_ERROR',
    );
    expectErrorBody(
      await gqlGet(server.url, slug, token, {
        query: 'query R($s: String!) { contentBySlug(type: "news", slug: $s) { id } }',
        variables: '{"s": "a\\u0000b"}',
      }),
      400,
      'VALIDATION_ERROR',
    );
    expectErrorBody(await gqlGet(server.url, slug, token, { operationName: 'x' }), 400, 'VALIDATION_ERROR');
    expectErrorBody(await gqlGet(server.url, slug, token, { query: '{ station { id } }', variables: '[1' }), 400, 'VALIDATION_ERROR');
  });

  it('NUL in a string literal of the document is VALIDATION_ERROR before any resolver runs (never INTERNAL_ERROR)', async () => {
    const res = await gql(server.url, slug, token, '{ contentBySlug(type: "news", slug: "a\\u0000b") { id } }');
    expect(res.status, res.text).to.equal(400);
    expect(res.body.data).to.equal(undefined);
    expect(res.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).to.deep.equal(['VALIDATION_ERROR']);
  });

  it('a mutation over GET is 405 METHOD_NOT_ALLOWED with Allow: POST; another method than GET or POST 405 with Allow: GET, POST', async () => {
    const res = await gqlGet(server.url, slug, token, { query: 'mutation { __typename }' });
    expectErrorBody(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).to.equal('POST');
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const other = await request(server.url, method, endpoint(), { token, json: { query: '{ station { id } }' } });
      expectErrorBody(other, 405, 'METHOD_NOT_ALLOWED');
      expect(other.headers.get('allow')).to.equal('GET, POST');
    }
  });

  it('HEAD answers like GET without the body: the same status, type and length', async () => {
    const path = `${endpoint()}?query=${encodeURIComponent('{ station { id name } }')}`;
    const get = await request(server.url, 'GET', path, { token });
    const head = await request(server.url, 'HEAD', path, { token });
    expect(get.status, get.text).to.equal(200);
    expect(head.status).to.equal(200);
    expect(head.text).to.equal('');
    expect(head.headers.get('content-type')).to.equal(get.headers.get('content-type'));
    expect(head.headers.get('content-length')).to.equal(String(Buffer.byteLength(get.text)));
    const mutation = await request(server.url, 'HEAD', `${endpoint()}?query=${encodeURIComponent('mutation { __typename }')}`, { token });
    expect(mutation.status, 'a mutation over HEAD is refused like over GET').to.equal(405);
    expect(mutation.headers.get('allow')).to.equal('POST');
  });
});

describe('GraphQL: depth, alias and cost limits', () => {
  let server: TestServer;
  let slug: string;
  let token: string;
  before(async () => {
    server = await sharedServer();
    ({
      token,
      station: { slug },
    } = await listenerFixture(server.url));
  });

  /** Refused by a limit: 400, VALIDATION_ERRORs only, one naming the limit, no data (nothing ran). */
  function expectRefused(res: Reply, what: RegExp): void {
    expect(res.status, res.text).to.equal(400);
    expect(res.body.data, 'no resolver ran').to.equal(undefined);
    const errors: Array<{ message: string; extensions: { code: string } }> = res.body.errors;
    expect(
      errors.map((e) => e.extensions.code),
      res.text,
    ).to.satisfy((codes: string[]) => codes.length > 0 && codes.every((c) => c === 'VALIDATION_ERROR'));
    expect(
      errors.some((e) => what.test(e.message)),
      res.text,
    ).to.equal(true);
  }

  it('refuses an operation nested deeper than GRAPHQL_MAX_DEPTH (default 10) before any resolver runs', async () => {
    expect((await gql(server.url, slug, token, `{ ${nested(10)} }`)).status).to.equal(200);
    // contentRecord of an unknown id would answer NOT_FOUND if it ran.
    expectRefused(
      await gql(server.url, slug, token, `{ contentRecord(id: "${randomUUID()}") { id } ${nested(11)} }`),
      /depth limit of 10 exceeded, found 11/,
    );
  });

  it('refuses more than GRAPHQL_MAX_ALIASES (default 15) aliases: an alias bomb', async () => {
    const aliases = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: station { id }`).join(' ');
    expect((await gql(server.url, slug, token, `{ ${aliases(15)} }`)).status).to.equal(200);
    expectRefused(
      await gql(server.url, slug, token, `{ contentRecord(id: "${randomUUID()}") { id } ${aliases(16)} }`),
      /Aliases limit of 15 exceeded/i,
    );
  });

  it('"the HTTP status follows the most severe code": a refused document is 400 every time it is sent, over POST and GET', async () => {
    // The parsed document and its validation are kept per query text: the second request of the same
    // text is answered from there and must keep the status of the first.
    const aliasBomb = `{ ${Array.from({ length: 16 }, (_, i) => `a${i}_${randomUUID().slice(0, 8)}: station { id }`).join(' ')} }`;
    const deep = `{ x_${randomUUID().slice(0, 8)}: ${nested(11)} }`;
    const nul = `{ contentBySlug(type: "news", slug: "a\\u0000${randomUUID()}") { id } }`;
    for (const query of [aliasBomb, deep, nul]) {
      for (let attempt = 1; attempt <= 3; attempt++) {
        expectRefused(await gql(server.url, slug, token, query), /exceeded|NUL/);
        expectRefused(await gqlGet(server.url, slug, token, { query }), /exceeded|NUL/);
      }
    }
  });

  it("every listener read's query and the standard introspection query pass the default limits", async () => {
    const introspection = await gql(server.url, slug, token, getIntrospectionQuery());
    expect(introspection.status, introspection.text).to.equal(200);
    expect(introspection.body.data.__schema.queryType.name).to.equal('Query');
    const everyRead = `{
      station { contractVersion id slug name timezone profile { tagline streamUrls { url } } resources { content schedule nowPlaying realtime { url channel } } delivery { pollIntervalSeconds } }
      content(type: "news", limit: 50) { records { id revision type values document publishedAt media { versionId kind url alt width height duration variants { thumb display card square } } related { programIds } } nextCursor }
      schemas { key version fields }
      nowPlaying { contractVersion }
      currentBroadcast { asOf }
    }`;
    const res = await gql(server.url, slug, token, everyRead);
    expect(
      res.body.errors?.filter((e: { extensions?: { code?: string } }) => e.extensions?.code === 'VALIDATION_ERROR') ?? [],
      res.text,
    ).to.deep.equal([]);
  });

  it('limits are configurable: with GRAPHQL_MAX_COST=10 a query over that budget is refused, one under it runs', async () => {
    const small = await startTestServer({ env: { GRAPHQL_MAX_COST: '10', GRAPHQL_MAX_DEPTH: '3', GRAPHQL_MAX_ALIASES: '1' } });
    try {
      const { station, token: t } = await listenerFixture(small.url);
      expect((await gql(small.url, station.slug, t, '{ station { id slug } }')).status).to.equal(200);
      expectRefused(
        await gql(small.url, station.slug, t, '{ station { id slug name timezone profile { tagline } } }'),
        /Cost limit of 10 exceeded/i,
      );
      expectRefused(await gql(small.url, station.slug, t, '{ station { profile { streamUrls { url } } } }'), /depth limit of 3 exceeded/);
      expectRefused(await gql(small.url, station.slug, t, '{ a: station { id } b: station { id } }'), /Aliases limit of 1 exceeded/i);
    } finally {
      await small.close();
    }
  });
});
