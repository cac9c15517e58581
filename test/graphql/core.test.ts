import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sharedServer, type TestServer } from '../support/server.ts';
import { admin, request } from '../support/http.ts';
import { createStation, createToken, listenerFixture } from '../support/factories.ts';
import { contentFixture, published } from '../domains/content/helpers.ts';
import { gql, gqlGet } from './helpers.ts';

describe('GraphQL: endpoint, gates, errors', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('answers the station query with the same shape as the REST station document, no-store and no ETag', async () => {
    const { station, token } = await listenerFixture(server.url);
    const rest = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    const res = await gql(
      server.url,
      station.slug,
      token,
      '{ station { contractVersion id slug name timezone profile { tagline streamUrls { url } } resources { content schedule nowPlaying realtime { url channel sse } } delivery { pollIntervalSeconds } } }',
    );
    expect(res.status).to.equal(200);
    expect(res.body.errors).to.equal(undefined);
    const s = res.body.data.station;
    expect(s).to.include({ contractVersion: 1, id: station.id, slug: station.slug, timezone: 'Europe/Berlin' });
    expect(s.resources.content).to.equal(rest.body.resources.content);
    expect(s.resources.realtime).to.deep.equal(rest.body.resources.realtime);
    expect(s.delivery.pollIntervalSeconds).to.equal(30);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('etag')).to.equal(null);
  });

  it('accepts GET with query, variables and operationName', async () => {
    const { station, token } = await listenerFixture(server.url);
    const res = await gqlGet(server.url, station.slug, token, {
      query: 'query S($t: String) { station { id } schemas(type: $t) { key } }',
      variables: JSON.stringify({ t: null }),
      operationName: 'S',
    });
    expect(res.status).to.equal(200);
    expect(res.body.data.station.id).to.equal(station.id);
  });

  it('refuses mutations over GET', async () => {
    const { station, token } = await listenerFixture(server.url);
    const res = await gqlGet(server.url, station.slug, token, { query: 'mutation { __typename }' });
    expect(res.status).to.equal(405);
  });

  it('accepts standard introspection', async () => {
    const { station, token } = await listenerFixture(server.url);
    const res = await gql(server.url, station.slug, token, '{ __schema { queryType { name } types { name } } }');
    expect(res.status).to.equal(200);
    const names = res.body.data.__schema.types.map((t: { name: string }) => t.name);
    expect(names).to.include.members(['Station', 'PublishedRecord', 'PublicMedia', 'ContentFilter']);
    expect(res.body.data.__schema.queryType.name).to.equal('Query');
  });

  it('unknown, inactive or offline stations are 404 with the REST body before the query runs; bad tokens 401', async () => {
    const { station, token } = await listenerFixture(server.url);
    const unknown = await gql(server.url, 'no-such-station', token, '{ station { id } }');
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal('NOT_FOUND');
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { publicOnline: false });
    expect((await gql(server.url, station.slug, token, '{ station { id } }')).status).to.equal(404);
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { publicOnline: true, active: false });
    const inactive = await gql(server.url, station.slug, token, '{ station { id } }');
    expect(inactive.status).to.equal(404);
    expect(inactive.body.error.code).to.equal('NOT_FOUND');
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { active: true });
    expect((await gql(server.url, station.slug, token, '{ station { id } }')).status).to.equal(200);
    const anonymous = await gql(server.url, station.slug, undefined, '{ station { id } }');
    expect(anonymous.status).to.equal(401);
    expect(anonymous.body.error.code).to.equal('UNAUTHENTICATED');
    const other = await createStation(server.url);
    const { token: otherToken } = await createToken(server.url, other.id);
    expect((await gql(server.url, station.slug, otherToken, '{ station { id } }')).status).to.equal(401);
  });

  it('GraphQL-native errors carry no extensions.code', async () => {
    const { station, token } = await listenerFixture(server.url);
    const res = await gql(server.url, station.slug, token, '{ station { nope } }');
    expect(res.body.errors[0].extensions?.code).to.equal(undefined);
    const missingVar = await gql(server.url, station.slug, token, 'query Q($id: ID!) { contentRecord(id: $id) { id } }');
    expect(missingVar.body.errors[0].extensions?.code).to.equal(undefined);
  });

  it('answers CORS preflight without credentials', async () => {
    const { station } = await listenerFixture(server.url);
    const res = await request(server.url, 'OPTIONS', `/api/v1/stations/${station.slug}/graphql`, {
      headers: { origin: 'https://x.example', 'access-control-request-method': 'POST' },
    });
    expect(res.status).to.equal(204);
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
  });
});

describe('GraphQL: content', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('lists, filters and pages records with the REST record shape', async () => {
    const { station, token, get } = await contentFixture(server);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        await published(server.url, station.id, 'news', {
          title: `Story ${i}`,
          category: i === 1 ? 'sport' : 'music',
          internal_note: 'secret',
        }),
      );
    const q = `query($c: String) { content(type: "news", limit: 2, cursor: $c) { nextCursor records { contractVersion id type values document media { url } related { programIds } } } }`;
    const first = await gql(server.url, station.slug, token, q);
    expect(first.body.errors).to.equal(undefined);
    expect(first.body.data.content.records.map((r: { id: string }) => r.id)).to.deep.equal([ids[2], ids[1]]);
    expect(first.body.data.content.records[0].values).to.not.have.property('internal_note');
    const second = await gql(server.url, station.slug, token, q, { c: first.body.data.content.nextCursor });
    expect(second.body.data.content.records.map((r: { id: string }) => r.id)).to.deep.equal([ids[0]]);
    expect(second.body.data.content.nextCursor).to.equal(null);
    const rest = await get(`/content/${ids[0]}`);
    const one = await gql(
      server.url,
      station.slug,
      token,
      `{ contentRecord(id: "${ids[0]}") { id publicationId revision schemaVersion publishedAt firstPublishedAt values document } }`,
    );
    expect(one.body.data.contentRecord).to.deep.include({
      id: ids[0],
      publicationId: rest.body.publicationId,
      publishedAt: rest.body.publishedAt,
    });
    expect(one.body.data.contentRecord.values).to.deep.equal(rest.body.values);
    const filtered = await gql(
      server.url,
      station.slug,
      token,
      '{ content(type: "news", filter: [{field: "category", op: anyOf, values: ["sport"]}]) { records { id } } }',
    );
    expect(filtered.body.data.content.records.map((r: { id: string }) => r.id)).to.deep.equal([ids[1]]);
  });

  it('reports VALIDATION_ERROR for a non-filterable field, a cursor reused with another sort, a bad id and version without type (HTTP 400)', async () => {
    const { station, token } = await contentFixture(server);
    for (let i = 0; i < 2; i++) await published(server.url, station.id, 'news', { title: `S${i}` });
    const badField = await gql(
      server.url,
      station.slug,
      token,
      '{ content(type: "news", filter: [{field: "rating", value: "3"}]) { records { id } } }',
    );
    expect(badField.status).to.equal(400);
    expect(badField.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
    const page = await gql(server.url, station.slug, token, '{ content(type: "news", limit: 1) { nextCursor } }');
    const cursor = page.body.data.content.nextCursor;
    const mismatch = await gql(
      server.url,
      station.slug,
      token,
      `{ content(type: "news", limit: 1, sort: updatedAt, cursor: "${cursor}") { records { id } } }`,
    );
    expect(mismatch.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
    const badId = await gql(server.url, station.slug, token, '{ contentRecord(id: "not-a-uuid") { id } }');
    expect(badId.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
    const versionOnly = await gql(server.url, station.slug, token, '{ schemas(version: 1) { key } }');
    expect(versionOnly.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
    const limit = await gql(server.url, station.slug, token, '{ content(type: "news", limit: 51) { nextCursor } }');
    expect(limit.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
  });

  it('unknown type gives an empty page, or NOT_FOUND with a filter; unpublished and other stations are NOT_FOUND (HTTP 404)', async () => {
    const { station, token } = await contentFixture(server);
    const empty = await gql(server.url, station.slug, token, '{ content(type: "nothing") { records { id } nextCursor } }');
    expect(empty.body).to.deep.equal({ data: { content: { records: [], nextCursor: null } } });
    const withFilter = await gql(
      server.url,
      station.slug,
      token,
      '{ content(type: "nothing", filter: [{field: "title", value: "x"}]) { records { id } } }',
    );
    expect(withFilter.status).to.equal(404);
    expect(withFilter.body.errors[0].extensions.code).to.equal('NOT_FOUND');
    const other = await contentFixture(server);
    const foreign = await published(server.url, other.station.id, 'news', { title: 'Elsewhere' });
    const res = await gql(server.url, station.slug, token, `{ contentRecord(id: "${foreign}") { id } }`);
    expect(res.body.errors[0].extensions.code).to.equal('NOT_FOUND');
    expect(res.body.data).to.deep.equal({ contentRecord: null });
    const missing = await gql(server.url, station.slug, token, `{ contentRecord(id: "${randomUUID()}") { id } }`);
    expect(missing.body.errors[0].extensions.code).to.equal('NOT_FOUND');
  });

  it('finds by current and former slug', async () => {
    const { station, token } = await contentFixture(server);
    const id = await published(server.url, station.id, 'news', { title: 'A', slug: 'first-slug' });
    await published(server.url, station.id, 'news', { title: 'A', slug: 'second-slug' }, {}, id as ReturnType<typeof randomUUID>);
    const res = await gql(
      server.url,
      station.slug,
      token,
      '{ a: contentBySlug(type: "news", slug: "first-slug") { id values } b: contentBySlug(type: "news", slug: "second-slug") { id } }',
    );
    expect(res.body.data.a.id).to.equal(id);
    expect(res.body.data.a.values.slug).to.equal('second-slug');
    expect(res.body.data.b.id).to.equal(id);
  });

  it('a disabled content module gives NOT_FOUND and a null resource', async () => {
    const { station, token } = await contentFixture(server);
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { content: false } });
    const res = await gql(server.url, station.slug, token, '{ content(type: "news") { nextCursor } station { id } }');
    expect(res.body.data.content).to.equal(null);
    expect(res.body.data.station.id).to.equal(station.id);
    expect(res.body.errors[0].extensions.code).to.equal('NOT_FOUND');
  });

  it('schemas returns content types without private fields', async () => {
    const { station, token } = await contentFixture(server);
    const res = await gql(server.url, station.slug, token, '{ schemas { key version archived fields } }');
    expect(res.body.data.schemas[0].key).to.equal('news');
    expect(res.body.data.schemas[0].fields.map((f: { key: string }) => f.key)).to.not.include('internal_note');
  });
});
