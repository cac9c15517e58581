import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.ts';
import { createDb, type Db } from '../../src/lib/db.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createQueue } from '../../src/lib/queue.ts';
import { createStation, eventually, listenerFixture } from '../support/factories.ts';
import { FeedClient, realtimePath, SseFeedClient, ssePath, withCursor } from '../support/feed.ts';
import { published, putType } from '../domains/content/helpers.ts';
import { admin, request } from '../support/http.ts';
import { ingest, ingestFixture } from '../support/ingest.ts';
import { enabledSetting, get as spiGet } from '../domains/radiodns/helpers.ts';

// `npm run test:cluster` (.mocharc.cluster.json): every role twice — 2 web, 2 worker, 2 gateway processes,
// started as the Procfile starts them — on the test database and Redis index (TEST_DATABASE_URL,
// TEST_REDIS_URL; the root hooks recreate both). Real HTTP and WebSocket clients only.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Seconds a worker's job lock lasts here: a killed worker's jobs are taken over after about this long. */
const LOCK_SECONDS = 2;

interface Role {
  name: string;
  child: ChildProcess;
  port: number;
  url: string;
  output(): string;
  exited: Promise<number | null>;
}

function freePort(): Promise<number> {
  return new Promise((ok) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => ok(port));
    });
  });
}

async function startRole(role: 'web' | 'worker' | 'gateway', name: string): Promise<Role> {
  const port = await freePort();
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PORT: String(port),
    WORKER_PORT: String(port),
    WORKER_LOCK_SECONDS: String(LOCK_SECONDS),
  };
  const child = spawn(process.execPath, ['src/main.ts', role], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => (await fetch(`${url}/${role === 'gateway' ? 'healthz' : 'readyz'}`)).ok, {
    timeoutMs: 30_000,
    intervalMs: 100,
  }).catch((err: unknown) => {
    throw new Error(`${name} did not become ready: ${String(err)}\n${out}`);
  });
  return { name, child, port, url, output: () => out, exited };
}

/** One sample of a Prometheus exposition (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((label) => line.includes(label))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

const metricsOf = async (role: Role) => (await request(role.url, 'GET', '/metrics')).text;

describe('a cluster: every role twice on one Postgres and one Redis', function () {
  this.timeout(120_000);
  let webA: Role, webB: Role, workerA: Role, workerB: Role, gatewayA: Role, gatewayB: Role;
  let db: Db;
  const all = () => [webA, webB, workerA, workerB, gatewayA, gatewayB].filter(Boolean);

  before(async () => {
    [webA, webB, workerA, workerB, gatewayA, gatewayB] = await Promise.all([
      startRole('web', 'web A'),
      startRole('web', 'web B'),
      startRole('worker', 'worker A'),
      startRole('worker', 'worker B'),
      startRole('gateway', 'gateway A'),
      startRole('gateway', 'gateway B'),
    ]);
    db = createDb(loadConfig().databaseUrl, { max: 2 });
  });

  after(async () => {
    for (const role of all()) {
      if (role.child.exitCode === null && role.child.signalCode === null) {
        role.child.kill('SIGCONT');
        role.child.kill('SIGTERM');
        await role.exited;
      }
    }
    await db?.destroy();
  });

  it('a write through web A reaches listeners on gateway B', async () => {
    const { station, ingestToken } = await ingestFixture(webA.url);
    const onB = await FeedClient.connect(gatewayB.url.replace('http', 'ws'), realtimePath(station.id));
    const onA = await FeedClient.connect(gatewayA.url.replace('http', 'ws'), realtimePath(station.id));
    try {
      // Let both gateways finish admitting their client (the station has no rows yet: no snapshot frame).
      await eventually(
        async () =>
          sample(await metricsOf(gatewayB), 'waveline_gateway_stations_subscribed') >= 1 &&
          sample(await metricsOf(gatewayA), 'waveline_gateway_stations_subscribed') >= 1,
      );
      const res = await ingest(webA.url, station, ingestToken, { artist: 'Cluster Artist', title: 'Through Web A' });
      expect(res.status).to.equal(200);
      const isTrack = (f: { data: { payload: { kind: string; data_json: string } } }) =>
        f.data.payload.kind === 'now-playing' && f.data.payload.data_json.includes('Through Web A');
      await onB.waitEvent(isTrack);
      await onA.waitEvent(isTrack);
    } finally {
      onA.close();
      onB.close();
    }
  });

  it('a credential revoked through web A is refused by web B on the next read', async () => {
    const { station, token, credentialId } = await listenerFixture(webA.url);
    const path = `/api/v1/stations/${station.slug}`;
    // Web B has the credential in its cache.
    for (let i = 0; i < 3; i++) expect((await request(webB.url, 'GET', path, { token })).status).to.equal(200);
    expect((await admin(webA.url, 'DELETE', `/stations/${station.id}/credentials/${credentialId}`)).status).to.equal(204);
    const next = await request(webB.url, 'GET', path, { token });
    expect(next.status).to.equal(401);
    expect(next.body.error.code).to.equal('UNAUTHENTICATED');
  });

  it('a station change through web A drops the RadioDNS documents web B keeps as bytes', async () => {
    const host = `cluster-${Date.now().toString(36)}.radio.example`;
    const station = await createStation(webA.url);
    expect((await admin(webA.url, 'PATCH', `/stations/${station.id}`, { radiodns: enabledSetting(host) })).status).to.equal(200);
    const si = () => spiGet(webB.url, '/radiodns/spi/3.1/SI.xml', { host });
    const first = await si();
    expect(first.status).to.equal(200);
    expect((await si()).headers.etag).to.equal(first.headers.etag);
    expect((await admin(webA.url, 'PATCH', `/stations/${station.id}`, { name: 'Renamed through web A' })).status).to.equal(200);
    const next = await si();
    expect(next.headers.etag).not.to.equal(first.headers.etag);
    expect(next.text).to.include('<longName>Renamed through web A</longName>');
  });

  it("an ingest's following job runs once, on one of the two workers", async () => {
    const { station, ingestToken } = await ingestFixture(webA.url);
    const completed = async () => {
      const [a, b] = await Promise.all([metricsOf(workerA), metricsOf(workerB)]);
      return (
        sample(a, 'waveline_jobs_completed_total', { job: 'nowPlaying.follow' }) +
        sample(b, 'waveline_jobs_completed_total', { job: 'nowPlaying.follow' })
      );
    };
    const before = await completed();
    const first = await ingest(webA.url, station, ingestToken, { artist: 'Once', title: 'First' });
    expect(first.status).to.equal(200);
    await eventually(async () => (await completed()) >= before + 1);
    // A second observation through the other web process: had the first job run twice, the count would pass 2.
    const second = await ingest(webB.url, station, ingestToken, { artist: 'Once', title: 'Second' });
    expect(second.status).to.equal(200);
    await eventually(async () => (await completed()) >= before + 2);
    const rows = await db('observations')
      .where({ station_id: station.id })
      .whereNotNull('followed_at')
      .count<{ count: string }[]>('* as count');
    expect(Number(rows[0].count)).to.equal(2);
    expect(await completed()).to.equal(before + 2);
  });

  it('a gateway stopped with SIGTERM closes its clients with 1012; their reconnects land on the other with the full state', async () => {
    const { station, ingestToken } = await ingestFixture(webA.url);
    expect((await ingest(webA.url, station, ingestToken, { artist: 'Before', title: 'The Restart' })).status).to.equal(200);
    const extra = await createStation(webA.url); // a second station followed by the same clients
    const listened = [station.id, extra.id];
    const clients = await Promise.all(
      [0, 1, 2].map(() => FeedClient.connect(gatewayA.url.replace('http', 'ws'), realtimePath(...listened))),
    );
    for (const client of clients) await client.waitEvent((f) => f.data.payload.kind === 'now-playing');
    gatewayA.child.kill('SIGTERM');
    const closes = await Promise.all(clients.map((c) => c.closed));
    expect(closes.map((c) => c.code)).to.deep.equal([1012, 1012, 1012]);
    expect(await gatewayA.exited).to.equal(0);
    // A change while the clients are away: the reconnect's state must have it.
    expect((await ingest(webB.url, station, ingestToken, { artist: 'While', title: 'Reconnecting' })).status).to.equal(200);
    const reconnected = await Promise.all(
      clients.map(() => FeedClient.connect(gatewayB.url.replace('http', 'ws'), realtimePath(...listened))),
    );
    const fresh = await FeedClient.connect(gatewayB.url.replace('http', 'ws'), realtimePath(...listened));
    try {
      const isCurrent = (f: { data: { payload: { kind: string; data_json: string } } }) =>
        f.data.payload.kind === 'now-playing' && f.data.payload.data_json.includes('Reconnecting');
      await fresh.waitEvent(isCurrent);
      const expected = [...fresh.state().keys()].sort();
      expect(expected.length).to.be.at.least(1);
      for (const client of reconnected) {
        await client.waitEvent(isCurrent);
        await eventually(() => client.state().size >= expected.length);
        expect([...client.state().keys()].sort()).to.deep.equal(expected);
      }
    } finally {
      for (const client of [...reconnected, fresh]) client.close();
    }
  });

  it('a client of gateway A resumes on gateway B after A is stopped with SIGTERM and misses nothing: only the changes made during the gap', async () => {
    const gatewayC = await startRole('gateway', 'gateway C'); // gateway A was stopped by the previous case
    const { station, ingestToken } = await ingestFixture(webA.url);
    expect((await putType(webA.url, station.id, 'news')).status).to.equal(200);
    const kept = await published(webA.url, station.id, 'news', { title: 'Kept' });
    const gone = await published(webA.url, station.id, 'news', { title: 'Unpublished during the gap' });
    expect((await ingest(webA.url, station, ingestToken, { artist: 'Before', title: 'The Gap' })).status).to.equal(200);
    // Both WebSockets ask for resume (`lastEventId`, empty for the full state), so they get `synced`.
    const onA = await FeedClient.connect(gatewayC.url.replace('http', 'ws'), withCursor(realtimePath(station.id)));
    const sseOnA = await SseFeedClient.open(gatewayC.url + ssePath(station.id));
    await onA.waitSynced();
    await sseOnA.waitSynced();
    await onA.waitEvent((f) => f.data.payload.kind === 'now-playing');
    gatewayC.child.kill('SIGTERM');
    expect((await onA.closed).code).to.equal(1012);
    await sseOnA.ended; // the draining gateway ends its SSE streams
    expect(await gatewayC.exited).to.equal(0);
    const cursor = onA.lastCursor()!;
    const lastEventId = sseOnA.messages.at(-1)!.id!;

    // The gap: 4 records published, 1 unpublished, a new track — 6 rows changed.
    const during: string[] = [];
    for (let i = 0; i < 4; i++) during.push(await published(webB.url, station.id, 'news', { title: `During ${i}` }));
    expect((await admin(webB.url, 'POST', `/stations/${station.id}/records/${gone}/unpublish`, {})).status).to.equal(200);
    expect((await ingest(webB.url, station, ingestToken, { artist: 'During', title: 'The Gap' })).status).to.equal(200);
    const expected = [...during.map((id) => `content:${id}`), `content:${gone}`, 'now-playing:current'].sort();

    const onB = await FeedClient.connect(gatewayB.url.replace('http', 'ws'), withCursor(realtimePath(station.id), cursor));
    const sseOnB = await SseFeedClient.open(gatewayB.url + ssePath(station.id), { 'Last-Event-ID': lastEventId });
    const fresh = await FeedClient.connect(gatewayB.url.replace('http', 'ws'), withCursor(realtimePath(station.id)));
    try {
      const channel = `stations.${station.id}.feed`;
      expect((await onB.waitSynced()).data.states).to.deep.equal({ [channel]: 'resumed' });
      expect((await sseOnB.waitSynced()).data.data.states).to.deep.equal({ [channel]: 'resumed' });
      await fresh.waitSynced();
      const replayed = onB.events().map((f) => f.data.payload.$id);
      expect([...replayed].sort()).to.deep.equal(expected); // one event per row changed in the gap, nothing else
      expect(onB.eventsOf(`content:${gone}`)[0].data.events[0]).to.match(/\.delete$/);
      const sseReplayed = sseOnB
        .data()
        .filter((m) => m.type === 'event')
        .map((m) => m.data.payload.$id);
      expect([...sseReplayed].sort()).to.deep.equal(expected);
      // What A sent, then what B replayed: the state a fresh client of B gets (content: the 20 newest).
      const state = onA.state();
      for (const [rowId, data] of onB.state()) state.set(rowId, data);
      for (const frame of onB.events()) if (frame.data.events[0].endsWith('.delete')) state.delete(frame.data.payload.$id);
      expect([...state.keys()].sort()).to.deep.equal([...fresh.state().keys()].sort());
      for (const [rowId, data] of fresh.state()) if (rowId !== 'now-playing:current') expect(state.get(rowId), rowId).to.deep.equal(data);
      expect(state.has(`content:${kept}`)).to.equal(true);
    } finally {
      for (const client of [onB, fresh]) client.close();
      sseOnB.close();
      if (gatewayC.child.exitCode === null && gatewayC.child.signalCode === null) gatewayC.child.kill('SIGTERM');
    }
  });

  it('a worker killed (SIGKILL) in the middle of jobs loses none: the other finishes them, no observation without its following', async () => {
    const fixtures = await Promise.all([0, 1, 2, 3].map(() => ingestFixture(webA.url)));
    const queue = createQueue('ingest', loadConfig().redis, createLogger(loadConfig(), 'cluster-test'));
    try {
      // Worker B pauses, so every job runs on worker A, which is then killed with jobs in hand.
      workerB.child.kill('SIGSTOP');
      const TOTAL = 160;
      let sent = 0;
      const statuses: number[] = [];
      const lanes = Array.from({ length: 32 }, async (_, lane) => {
        while (sent < TOTAL) {
          const n = sent++;
          const { station, ingestToken } = fixtures[n % fixtures.length];
          const web = lane % 2 ? webA : webB;
          statuses.push((await ingest(web.url, station, ingestToken, { artist: `Artist ${n}`, title: `Track ${n}` })).status);
        }
      });
      await eventually(async () => (await queue.queue.getJobCounts('active')).active >= 3, { timeoutMs: 20_000, intervalMs: 5 });
      workerA.child.kill('SIGKILL');
      await workerA.exited;
      workerB.child.kill('SIGCONT');
      await Promise.all(lanes);
      expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
      const ids = fixtures.map((f) => f.station.id);
      const counts = async () => {
        const [row] = await db('observations')
          .whereIn('station_id', ids)
          .select(db.raw('count(*)::int AS total'), db.raw('count(followed_at)::int AS followed'));
        return row as { total: number; followed: number };
      };
      await eventually(async () => (await counts()).followed === TOTAL, { timeoutMs: 60_000, intervalMs: 200 });
      expect(await counts()).to.deep.equal({ total: TOTAL, followed: TOTAL });
      // Worker B took back the jobs worker A held when it died.
      expect(sample(await metricsOf(workerB), 'waveline_jobs_stalled_total', { queue: 'ingest' })).to.be.at.least(1);
      const failed = await queue.queue.getJobCounts('failed');
      expect(failed.failed).to.equal(0);
    } finally {
      workerB.child.kill('SIGCONT');
      await queue.queue.close();
      queue.connection.disconnect();
    }
  });
});
