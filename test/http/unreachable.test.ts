import { expect } from 'chai';
import { loadConfig } from '../../src/config.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { request, type Reply } from '../support/http.ts';
import { createToken, eventually } from '../support/factories.ts';
import { ingest, ingestFixture } from '../support/ingest.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.ts';
import { requiresPostgresServer } from '../support/mode.ts';
import { graphqlKey, readKey } from '../../src/lib/readCache.ts';

// docs/errors.md#postgres-unreachable: routes that need Postgres answer 503 PROVIDER_UNAVAILABLE
// with Retry-After within 2 s (never 500, never a hang); answers still valid in memory may be served.
// Ingest never answers 2xx for an observation it did not store. The test server reaches Postgres
// through a TCP proxy of its own, which the test cuts; the shared Postgres is never touched.

describe('Postgres unreachable: 503 PROVIDER_UNAVAILABLE within 2 s, memory answers keep coming, recovery without a restart', function () {
  this.timeout(60_000);
  let proxy: TcpProxy;
  let server: TestServer;
  before(async function () {
    requiresPostgresServer(this, 'a TCP proxy cuts the connections to a Postgres server; the embedded database is in the process');
    const database = new URL(loadConfig().databaseUrl);
    proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) });
    const proxied = new URL(database);
    proxied.host = `127.0.0.1:${proxy.port}`;
    server = await startTestServer({ env: { DATABASE_URL: proxied.toString() } });
  });
  afterEach(() => proxy.restore());
  after(async () => {
    await server?.close();
    await proxy?.close();
  });

  /** A request and how long its answer took. */
  async function timed(send: () => Promise<Reply>): Promise<Reply & { ms: number }> {
    const started = performance.now();
    const reply = await send();
    return Object.assign(reply, { ms: performance.now() - started });
  }

  for (const mode of ['refuse', 'blackhole'] as const) {
    it(`connections ${mode === 'refuse' ? 'cut and refused' : 'cut and left unanswered'}: reads and ingest 503 with Retry-After in under 2 s, /readyz fails, the cached station document is still served; then it recovers`, async () => {
      const { station, ingestToken, listenerToken: token } = await ingestFixture(server.url, { rundownFollowing: false });
      const content = `/api/v1/stations/${station.slug}/content?type=news`;
      const document = `/api/v1/stations/${station.slug}`;
      expect((await request(server.url, 'GET', document, { token })).status).to.equal(200);
      expect((await ingest(server.url, station, ingestToken, { artist: 'Before', title: 'Cut' })).status).to.equal(200);
      const { token: unseenToken } = await createToken(server.url, station.id); // never used: not in the credential cache
      const stored = async () => Number((await server.svc.db('observations').where({ station_id: station.id }).count({ n: '*' }))[0].n);

      mode === 'refuse' ? proxy.refuse() : proxy.blackhole();
      const [read, ingested, ready, cached, uncachedCredential, uncachedStation] = await Promise.all([
        timed(() => request(server.url, 'GET', content, { token })),
        timed(() => ingest(server.url, station, ingestToken, { artist: 'During', title: 'Outage' })),
        timed(() => request(server.url, 'GET', '/readyz')),
        timed(() => request(server.url, 'GET', document, { token })),
        timed(() => request(server.url, 'GET', document, { token: unseenToken })),
        timed(() => request(server.url, 'GET', '/api/v1/stations/no-such-station-cached', { token })),
      ]);
      for (const reply of [uncachedCredential, uncachedStation]) {
        expect(reply.status, 'a look-up that needs Postgres is 503, not 401 or 404').to.equal(503);
        expect(reply.ms).to.be.below(2000);
      }
      expect(read.status, read.text).to.equal(503);
      expect(read.body.error.code).to.equal('PROVIDER_UNAVAILABLE');
      expect(read.body.error.requestId).to.equal(read.headers.get('x-request-id'));
      expect(read.headers.get('retry-after')).to.match(/^\d+$/);
      expect(read.ms).to.be.below(2000);
      expect(ingested.status, ingested.text).to.equal(503);
      expect(ingested.body).to.have.all.keys('error');
      expect(ingested.headers.get('retry-after')).to.match(/^\d+$/);
      expect(ingested.ms).to.be.below(2000);
      expect(ready.status).to.equal(503);
      expect(ready.ms).to.be.below(2500);
      expect(cached.status, 'the station document is served from memory').to.equal(200);

      proxy.restore();
      await eventually(async () => (await request(server.url, 'GET', content, { token })).status === 200, { timeoutMs: 10_000 });
      expect((await request(server.url, 'GET', '/readyz')).status).to.equal(200);
      expect(await stored(), 'the observation answered 503 was not stored').to.equal(1);
      expect((await ingest(server.url, station, ingestToken, { artist: 'After', title: 'Recovery' })).status).to.equal(200);
      expect(await stored()).to.equal(2);
    });
  }

  it('many apps polling one read that must be computed during the outage: every answer, REST and GraphQL, is 503 with Retry-After in under 2 s', async () => {
    const { station, listenerToken: token } = await ingestFixture(server.url, { rundownFollowing: false });
    // The station and credential are in memory (a first read), so the polls below may be answered before Koa.
    expect((await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status).to.equal(200);
    const rest = `/api/v1/stations/${station.slug}/now-playing`;
    const query = new URLSearchParams({ query: '{ nowPlaying { stationId } }' }).toString();
    const graphql = `/api/v1/stations/${station.slug}/graphql?${query}`;
    const ask = () => [
      timed(() => request(server.url, 'GET', rest, { token })),
      timed(() => request(server.url, 'GET', graphql, { token, headers: { accept: 'application/json' } })),
    ];
    proxy.blackhole();
    // The first poll of each starts the computation; the others come while it waits for a connection, so
    // they wait for it (before Koa, like any poll of an app whose answer is being computed).
    const first = ask();
    const reads = server.svc.reads;
    await eventually(
      () =>
        reads.running(readKey('getNowPlaying', station.id), station.id, 'nowPlaying') !== undefined &&
        reads.running(graphqlKey('GET', station.id, 'application/json', '', query), station.id) !== undefined,
    );
    const replies = await Promise.all([...first, ...[...Array(7)].flatMap(ask)]);
    for (const [i, reply] of replies.entries()) {
      expect(reply.status, `${i % 2 ? 'GraphQL' : 'REST'}: ${reply.text}`).to.equal(503);
      const code = i % 2 ? reply.body.errors[0].extensions.code : reply.body.error.code;
      expect(code).to.equal('PROVIDER_UNAVAILABLE');
      expect(reply.headers.get('retry-after')).to.match(/^\d+$/);
      expect(reply.ms, `${i % 2 ? 'GraphQL' : 'REST'} answered in ${Math.round(reply.ms)} ms`).to.be.below(2000);
    }
    proxy.restore();
    await eventually(async () => (await request(server.url, 'GET', rest, { token })).status === 200, { timeoutMs: 10_000 });
  });
});
