import { expect } from 'chai';
import { createStation, eventually, listenerFixture } from '../../support/factories.ts';
import { FeedClient, realtimePath, STATION_START_ROWS, startTestGateway, withCursor } from '../../support/feed.ts';
import { loadConfig } from '../../../src/config.ts';
import { createBlockingRedis } from '../../../src/lib/redis.ts';
import { admin, request } from '../../support/http.ts';
import { published, putType } from '../../domains/content/helpers.ts';
import { feedPath, podcastStation, publishEpisode, uploadAudio } from '../../domains/podcasts/helpers.ts';
import {
  metricsOf,
  pgReplica,
  prepareReplicatedDatabase,
  primaryUrl,
  readsOf,
  replicaCaughtUp,
  replicaUrl,
  sample,
  sql,
  startRole,
  stopRoles,
  type Role,
} from './support.ts';

// `npm run test:scale`: listener reads on a real streaming replica that replays every change 2 s late
// (scripts/pg-replica.sh), through real web and gateway processes (docs/operations.md#postgres-read-replicas).

const CONTENT = '/content?type=news';
const CONTENT_QUERY = '{ content(type: "news") { records { id } } }';
const GRAPHQL_CONTENT = `/graphql?query=${encodeURIComponent(CONTENT_QUERY)}`;

/** A schedule read of a day of its own: a new key each, so a read cache miss and a database read. */
const schedulePath = (slug: string, day: number): string =>
  `/api/v1/stations/${slug}/schedule?fromDate=2030-01-${String(day).padStart(2, '0')}&throughDate=2030-01-${String(day).padStart(2, '0')}`;

async function readyz(role: Role) {
  const res = await request(role.url, 'GET', '/readyz');
  expect(res.status, res.text).to.equal(200);
  return res.body as { replicas: Array<{ name: string; reachable: boolean; lagSeconds: number | null; used: boolean }> };
}

/** Waits until the web process routes reads to the replica again (its probe saw it caught up). */
async function replicaInUse(role: Role): Promise<void> {
  await eventually(async () => (await readyz(role)).replicas[0].used, { timeoutMs: 20_000, intervalMs: 100 });
}

describe('Postgres read replicas: read-your-writes with a replica 2 s behind', function () {
  this.timeout(120_000);
  let webA: Role, webB: Role, gatewayA: Role, gatewayB: Role;

  before(async function () {
    this.timeout(120_000);
    await prepareReplicatedDatabase();
    [webA, webB, gatewayA, gatewayB] = await Promise.all([
      startRole('web', 'web A'),
      startRole('web', 'web B'),
      startRole('gateway', 'gateway A'),
      startRole('gateway', 'gateway B'),
    ]);
  });

  after(async () => {
    await sql(replicaUrl, 'SELECT pg_wal_replay_resume()').catch(() => undefined);
    await stopRoles([webA, webB, gatewayA, gatewayB]);
  });

  it('/readyz names each replica by host:port, reachable, with its lag; the URL never shows', async () => {
    await replicaInUse(webA);
    const body = await readyz(webA);
    expect(body.replicas).to.have.length(1);
    expect(body.replicas[0]).to.include({ name: `127.0.0.1:${new URL(replicaUrl).port}`, reachable: true, used: true });
    expect(body.replicas[0].lagSeconds).to.be.a('number');
    const metrics = await metricsOf(webA);
    expect(metrics).to.match(/waveline_db_replica_lag_seconds\{replica="127\.0\.0\.1:\d+"\} [\d.]+/);
    expect(metrics).to.not.include('postgres://');
  });

  it('an admin write, then at once a listener read (REST and GraphQL) on the writing web process and on another: never older data, never kept', async () => {
    const { station, token } = await listenerFixture(webA.url);
    expect((await putType(webA.url, station.id, 'news')).status).to.equal(200);
    await replicaCaughtUp();
    await replicaInUse(webA);
    await replicaInUse(webB);
    const base = `/api/v1/stations/${station.slug}`;
    const rest = (web: Role) => request(web.url, 'GET', base + CONTENT, { token });
    const graphql = (web: Role) => request(web.url, 'GET', base + GRAPHQL_CONTENT, { token, headers: { accept: 'application/json' } });
    // The same query over POST (what most GraphQL clients send): a read too, routed the same way.
    const graphqlPost = (web: Role) =>
      request(web.url, 'POST', `${base}/graphql`, { token, json: { query: CONTENT_QUERY }, headers: { accept: 'application/json' } });
    // Both processes hold the answers before the writes (the read cache has them).
    for (const web of [webA, webB]) {
      expect((await rest(web)).status).to.equal(200);
      expect((await graphql(web)).status).to.equal(200);
      expect((await graphqlPost(web)).status).to.equal(200);
    }
    for (let round = 1; round <= 3; round++) {
      const id = await published(webA.url, station.id, 'news', { title: `Replica round ${round}` });
      // The replica does not have it yet: the reads below would show older data if they read it.
      const onReplica = await sql(replicaUrl, `SELECT 1 FROM published_records WHERE record_id = '${id}'`);
      expect(onReplica, 'the replica is 2 s behind').to.have.length(0);
      for (const web of [webA, webB]) {
        const listed = await rest(web);
        expect(listed.status).to.equal(200);
        expect(
          listed.body.records.map((r: { id: string }) => r.id),
          `${web.name} REST, round ${round}`,
        ).to.include(id);
        const viaGraphql = await graphql(web);
        expect(viaGraphql.status).to.equal(200);
        expect(
          viaGraphql.body.data.content.records.map((r: { id: string }) => r.id),
          `${web.name} GraphQL, round ${round}`,
        ).to.include(id);
        const viaPost = await graphqlPost(web);
        expect(viaPost.status, viaPost.text).to.equal(200);
        expect(
          viaPost.body.data.content.records.map((r: { id: string }) => r.id),
          `${web.name} GraphQL over POST, round ${round}`,
        ).to.include(id);
      }
    }
    // A station change made through B is shown at once by A too (the station document).
    const renamed = await admin(webB.url, 'PATCH', `/stations/${station.id}`, { name: 'Renamed On B' });
    expect(renamed.status).to.equal(200);
    for (const web of [webA, webB]) expect((await request(web.url, 'GET', base, { token })).body.name).to.equal('Renamed On B');
  });

  it('a podcast feed shows an episode published a moment ago, on both web processes', async () => {
    const { station } = await podcastStation(webA.url);
    const audio = await uploadAudio(webA.url, station.id);
    await replicaCaughtUp();
    await replicaInUse(webB);
    const feed = (web: Role) => request(web.url, 'GET', feedPath(station.slug));
    expect((await feed(webB)).status).to.equal(200); // kept by B before the write
    await publishEpisode(webA.url, station.id, { title: 'Fresh Episode On The Primary', audio: audio.versionId });
    for (const web of [webA, webB]) expect((await feed(web)).text, web.name).to.include('Fresh Episode On The Primary');
  });

  it('a gateway whose Redis subscription dropped catches up at the primary position: a row written meanwhile arrives while the replica still lacks it', async () => {
    // In this process, for its Redis reconnection delay: long enough for the write below to land while
    // the subscription is down. The replica's replay is paused, so it cannot have the row; its lag stays
    // under the maximum, so it is still fit for reads that need no newer position.
    const gateway = await startTestGateway(
      { DATABASE_URL: primaryUrl, DATABASE_REPLICA_URLS: replicaUrl, DATABASE_REPLICA_MAX_LAG_SECONDS: '120' },
      { redisReconnectDelayMs: 1500 },
    );
    const redis = createBlockingRedis(loadConfig().redis);
    try {
      const station = await createStation(webA.url);
      expect((await putType(webA.url, station.id, 'news')).status).to.equal(200);
      await replicaCaughtUp();
      const client = await FeedClient.ready(gateway.url, realtimePath(station.id), STATION_START_ROWS.length);

      await sql(replicaUrl, 'SELECT pg_wal_replay_pause()');
      const clients = (await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
      const line = clients.split('\n').find((l) => l.includes(`name=${gateway.redisClientName} `));
      const id = /\bid=(\d+)/.exec(line ?? '')?.[1];
      expect(id, 'the gateway subscriber connection').to.be.a('string');
      await redis.call('CLIENT', 'KILL', 'ID', id!, 'TYPE', 'pubsub');

      const recordId = await published(webA.url, station.id, 'news', { title: 'Written While The Gateway Was Away' });
      await eventually(() => client.state().has(`content:${recordId}`), { timeoutMs: 10_000, intervalMs: 50 });
      const onReplica = await sql(replicaUrl, `SELECT 1 FROM published_records WHERE record_id = '${recordId}'`);
      expect(onReplica, 'the replica has not replayed the write: the catch-up read it on the primary').to.have.length(0);
      client.close();
    } finally {
      await sql(replicaUrl, 'SELECT pg_wal_replay_resume()').catch(() => undefined);
      redis.disconnect();
      await gateway.close();
    }
  });

  it('a new feed connection gets the state after the write, and a resume on a gateway new to the station its history', async () => {
    const station = await createStation(webA.url);
    expect((await putType(webA.url, station.id, 'news')).status).to.equal(200);
    await replicaCaughtUp();
    const path = realtimePath(station.id);
    // A cursor from before the write.
    const before = await FeedClient.connect(gatewayA.url.replace('http', 'ws'), withCursor(path));
    await before.waitSynced();
    const cursor = before.lastCursor()!;
    before.close();

    const id = await published(webA.url, station.id, 'news', { title: 'Feed After The Write' });
    const rowId = `content:${id}`;
    // Gateway B never loaded the station: its initial read of it is where the write could be missing.
    const resumed = await FeedClient.connect(gatewayB.url.replace('http', 'ws'), withCursor(path, cursor));
    await resumed.waitSynced();
    expect(
      resumed.events().map((f) => f.data.payload.$id),
      'the resume history',
    ).to.include(rowId);
    resumed.close();

    const other = await createStation(webA.url);
    expect((await putType(webA.url, other.id, 'news')).status).to.equal(200);
    await replicaCaughtUp();
    const otherId = await published(webA.url, other.id, 'news', { title: 'Initial State After The Write' });
    const fresh = await FeedClient.connect(gatewayB.url.replace('http', 'ws'), withCursor(realtimePath(other.id)));
    await fresh.waitSynced();
    expect([...fresh.state().keys()], 'the initial state').to.include(`content:${otherId}`);
    fresh.close();
  });

  it('reads go to the replica once it has replayed the writes (waveline_db_reads_total by target)', async () => {
    const { station, token } = await listenerFixture(webB.url);
    await replicaCaughtUp();
    await replicaInUse(webB);
    const before = await readsOf(webB, 'replica');
    // Each read a new key: a cache miss, so a database read.
    for (let i = 1; i <= 5; i++) expect((await request(webB.url, 'GET', schedulePath(station.slug, i), { token })).status).to.equal(200);
    expect(await readsOf(webB, 'replica')).to.be.greaterThan(before);
  });

  it('a GraphQL query over POST reads the replica; a mutation over POST stays on the primary', async () => {
    const { station, token } = await listenerFixture(webB.url);
    await replicaCaughtUp();
    await replicaInUse(webB);
    const post = (body: Record<string, unknown>) =>
      request(webB.url, 'POST', `/api/v1/stations/${station.slug}/graphql`, { token, json: body, headers: { accept: 'application/json' } });
    const replicaBefore = await readsOf(webB, 'replica');
    // Each a text of its own: a read cache miss, so the operation runs.
    for (let i = 1; i <= 3; i++) {
      const res = await post({ query: `query Named${i} { station { name } }`, operationName: `Named${i}` });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.station.name).to.be.a('string');
    }
    const replicaAfter = await readsOf(webB, 'replica');
    expect(replicaAfter).to.be.at.least(replicaBefore + 3);
    const mutation = await post({
      query: `mutation { previewEditorial(input: { stationId: "${station.id}", recordId: "00000000-0000-4000-8000-000000000000" }) { revision } }`,
    });
    expect(mutation.status, mutation.text).to.not.equal(500);
    expect(await readsOf(webB, 'replica'), 'a mutation is never routed to a replica').to.equal(replicaAfter);
  });

  it('a replica that stops is skipped: no listener read fails, /readyz stays ready and reports it; it is used again once back', async () => {
    const { station, token } = await listenerFixture(webA.url);
    await replicaCaughtUp();
    await replicaInUse(webA);
    const primaryBefore = await readsOf(webA, 'primary');
    pgReplica('stop-replica');
    try {
      for (let i = 1; i <= 10; i++) {
        const res = await request(webA.url, 'GET', schedulePath(station.slug, i), { token });
        expect(res.status, res.text).to.not.equal(500);
        expect(res.status, res.text).to.not.equal(503);
      }
      expect(await readsOf(webA, 'primary')).to.be.greaterThan(primaryBefore);
      await eventually(async () => !(await readyz(webA)).replicas[0].reachable, { timeoutMs: 10_000, intervalMs: 100 });
      const station2 = (await request(webA.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status;
      expect(station2).to.equal(200);
    } finally {
      pgReplica('start');
    }
    await replicaInUse(webA);
  });

  it('a read that fails on a replica runs again on the primary (a replica never makes a listener read fail)', async () => {
    // A "replica" that answers its probes (a server in recovery) but fails every read: the replica's
    // `postgres` database, which has none of the tables.
    const broken = await startRole('web', 'web with a failing replica', {
      DATABASE_REPLICA_URLS: replicaUrl.replace(/\/[^/]+$/, '/postgres'),
    });
    try {
      const { station, token } = await listenerFixture(webA.url);
      await replicaCaughtUp();
      await replicaInUse(broken);
      const failedBefore = await readsOf(broken, 'primary', 'replica-failed');
      for (let i = 1; i <= 5; i++) {
        const res = await request(broken.url, 'GET', schedulePath(station.slug, i), { token });
        expect(res.status, res.text).to.equal(200);
      }
      const viaGraphql = await request(broken.url, 'GET', `/api/v1/stations/${station.slug}${GRAPHQL_CONTENT}`, {
        token,
        headers: { accept: 'application/json' },
      });
      expect(viaGraphql.status, viaGraphql.text).to.equal(200);
      expect(viaGraphql.body.errors).to.equal(undefined);
      expect(await readsOf(broken, 'primary', 'replica-failed')).to.be.at.least(failedBefore + 6);
    } finally {
      await stopRoles([broken]);
    }
  });

  it('a replica lagging more than DATABASE_REPLICA_MAX_LAG_SECONDS is skipped until it catches up', async () => {
    const strict = await startRole('web', 'web with a 1 s maximum lag', { DATABASE_REPLICA_MAX_LAG_SECONDS: '1' });
    try {
      const { station, token } = await listenerFixture(webA.url);
      await replicaCaughtUp();
      await replicaInUse(strict);
      await sql(replicaUrl, 'SELECT pg_wal_replay_pause()');
      try {
        await published(webA.url, station.id, 'news', { title: 'x' }).catch(() => undefined); // any write: WAL the replica does not replay
        await admin(webA.url, 'PATCH', `/stations/${station.id}`, { name: 'Lagging' });
        await eventually(async () => !(await readyz(strict)).replicas[0].used, { timeoutMs: 15_000, intervalMs: 100 });
        const lag = (await readyz(strict)).replicas[0].lagSeconds;
        expect(lag).to.be.greaterThan(1);
        expect(sample(await metricsOf(strict), 'waveline_db_replica_lag_seconds')).to.be.greaterThan(1);
        const replicaBefore = await readsOf(strict, 'replica');
        const unavailableBefore = await readsOf(strict, 'primary', 'unavailable');
        for (let i = 1; i <= 3; i++)
          expect((await request(strict.url, 'GET', schedulePath(station.slug, i), { token })).status).to.equal(200);
        expect(await readsOf(strict, 'replica')).to.equal(replicaBefore);
        expect(await readsOf(strict, 'primary', 'unavailable')).to.be.greaterThan(unavailableBefore);
      } finally {
        await sql(replicaUrl, 'SELECT pg_wal_replay_resume()');
      }
      await replicaInUse(strict);
    } finally {
      await stopRoles([strict]);
    }
  });
});
