import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { admin } from '../support/http.ts';
import { createStation } from '../support/factories.ts';
import { closeTestGateways, FeedClient, realtimePath, startTestGateway } from '../support/feed.ts';
import { Listener, streamPath, type Transport } from '../support/listenerTime.ts';
import { ingest, ingestFixture, until } from '../support/ingest.ts';

// docs/realtime.md#what-arrives: every station's feed holds a `schedule` row (`broadcasts: []` when there
// are none), an `on-air` row (data null when nothing is on air) and a `now-playing` row (track null,
// freshness `empty`) from its creation, so a connection always starts with all three; the connection
// starts with the current state.

const SCHEDULE = 'schedule:current';
const ON_AIR = 'on-air:current';
const NOW_PLAYING = 'now-playing:current';
const THREE = [SCHEDULE, ON_AIR, NOW_PLAYING];

const rowIdsOf = (listener: Listener): string[] =>
  listener.messages.filter((m) => m.data.type === 'event').map((m) => m.data.data.payload.$id as string);
const dataOf = (listener: Listener, rowId: string) => Listener.rowData(listener.eventsOf(rowId)[0]);

/** The three rows of a station without broadcasts or observations, as every connection must start with them. */
function expectEmptyStart(stationId: string, data: (rowId: string) => any): void {
  expect(data(SCHEDULE)).to.deep.equal({ contractVersion: 1, timezone: 'Europe/Berlin', broadcasts: [], truncated: false });
  expect(data(ON_AIR)).to.equal(null);
  const nowPlaying = data(NOW_PLAYING);
  expect(nowPlaying).to.include({ stationId, track: null, elapsedSeconds: null, endsAt: null });
  expect(nowPlaying.freshness).to.include({ status: 'empty' });
}

async function newStation(server: TestServer): Promise<{ id: string; slug: string }> {
  const res = await admin(server.url, 'POST', '/stations', {
    slug: `rows-${randomUUID().slice(0, 8)}`,
    name: 'Rows FM',
    timezone: 'Europe/Berlin',
    profile: { streamUrls: [{ url: 'https://stream.example.org/live.m3u8', key: 'hls', latencySeconds: 30 }] },
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body;
}

describe('realtime feed: a new station starts with its schedule, on-air and now-playing rows', () => {
  let server: TestServer;
  before(async () => (server = await sharedServer()));
  after(closeTestGateways);

  it('a station created through the admin API has the three rows stored at once, in the presenters’ shapes', async () => {
    const station = await newStation(server);
    const rows = await server.svc.db('feed_rows').where({ station_id: station.id }).orderBy('seq');
    expect(rows.map((r: { kind: string; entry: string; deleted: boolean }) => `${r.kind}:${r.entry}:${r.deleted}`).sort()).to.deep.equal([
      'now-playing:current:false',
      'on-air:current:false',
      'schedule:current:false',
    ]);
    const byKind = new Map(rows.map((r: { kind: string; data: unknown }) => [`${r.kind}:current`, r.data]));
    expectEmptyStart(station.id, (rowId) => byKind.get(rowId));
  });

  it('a plain WebSocket client (no lastEventId) gets the three rows on open', async () => {
    const gateway = await startTestGateway();
    const station = await newStation(server);
    const client = await FeedClient.ready(gateway.url, realtimePath(station.id), 3);
    const ids = client.events().map((f) => f.data.payload.$id);
    expect(ids).to.deep.equal(THREE);
    expect(client.events().every((f) => f.data.events[0].endsWith('.create'))).to.equal(true);
    expectEmptyStart(station.id, (rowId) => JSON.parse(client.eventsOf(rowId)[0].data.payload.data_json).data);
    client.close();
  });

  for (const transport of ['websocket', 'sse'] as Transport[]) {
    const name = transport === 'websocket' ? 'WebSocket (lastEventId=)' : 'SSE';
    it(`${name}: the three rows on open, with stream= too (at once, though the station is younger than the stream’s latency)`, async () => {
      const gateway = await startTestGateway();
      const station = await newStation(server);
      const plain = await Listener.open(transport, gateway.port, realtimePath(station.id));
      await plain.synced();
      expect(rowIdsOf(plain)).to.deep.equal(THREE);
      expectEmptyStart(station.id, (rowId) => dataOf(plain, rowId));

      const delayed = await Listener.open(transport, gateway.port, streamPath(station.id, 'hls'));
      await delayed.synced();
      expect(rowIdsOf(delayed), 'stream=hls (30 s behind) on a station created a moment ago').to.deep.equal(THREE);
      expectEmptyStart(station.id, (rowId) => dataOf(delayed, rowId));
      plain.close();
      delayed.close();
    });

    it(`${name}: a cursor of such a station resumes — only what changed since, then synced "resumed"`, async () => {
      const gateway = await startTestGateway();
      const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
      const first = await Listener.open(transport, gateway.port, realtimePath(station.id));
      await first.synced();
      expect(rowIdsOf(first)).to.deep.equal(THREE);
      const cursor = first.lastCursor();

      await ingest(server.url, station, ingestToken, { artist: 'A', title: 'First song', durationSeconds: 200 });
      // The ingest answers once the change is stored; the gateway learns of it over the bus a moment
      // later. Resume after this gateway has it (the first connection sees it live), so the test asks
      // what a resume sends, not whether it raced the bus (which sends the change live then anyway).
      await first.waitFor((m) => m.data.type === 'event' && m.data.data.payload.$id === NOW_PLAYING);
      first.close();
      const resumed = await Listener.open(transport, gateway.port, realtimePath(station.id), cursor);
      const synced = await resumed.synced();
      expect(Object.values(synced.data.data.states)).to.deep.equal(['resumed']);
      const events = resumed.messages.filter((m) => m.data.type === 'event');
      expect(events.map((m) => m.data.data.payload.$id)).to.deep.equal([NOW_PLAYING]);
      expect(events[0].data.data.events[0]).to.match(/\.update$/);
      expect(Listener.rowData(events[0]).track.title).to.equal('First song');

      // Nothing changed since the resumed connection's last cursor: nothing but synced.
      const again = await Listener.open(transport, gateway.port, realtimePath(station.id), resumed.lastCursor());
      await again.synced();
      expect(again.messages.filter((m) => m.data.type === 'event')).to.deep.equal([]);
      resumed.close();
      again.close();
    });
  }

  it('a station created by an import bundle has the three rows too', async () => {
    const slug = `import-rows-${randomUUID().slice(0, 8)}`;
    const res = await admin(server.url, 'POST', '/import', { station: { slug, name: 'Imported FM', timezone: 'Europe/Berlin' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const stationId = res.body.station.id;
    const rows = await until(async () => {
      const found = await server.svc.db('feed_rows').where({ station_id: stationId, deleted: false });
      return found.length === 3 ? found : null;
    });
    const byKind = new Map(rows.map((r: { kind: string; data: unknown }) => [`${r.kind}:current`, r.data]));
    expectEmptyStart(stationId, (rowId) => byKind.get(rowId));
  });

  it('the factory’s stations (the admin API) too: a station without streams gets the three rows plain', async () => {
    const gateway = await startTestGateway();
    const station = await createStation(server.url);
    const listener = await Listener.open('sse', gateway.port, realtimePath(station.id));
    await listener.synced();
    expect(rowIdsOf(listener)).to.deep.equal(THREE);
    listener.close();
  });
});
