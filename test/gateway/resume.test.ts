import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { admin } from '../support/http.ts';
import { createStation, eventually } from '../support/factories.ts';
import { pruneFeedHistory } from '../../src/feed/rows.ts';
import {
  channelOf,
  closeTestGateways,
  FeedClient,
  gatewayHas,
  realtimePath,
  removeRow,
  startTestGateway,
  STATION_START_ROWS,
  withCursor,
  writeRow,
} from '../support/feed.ts';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

const CURSOR = /^[A-Za-z0-9._~-]{1,400}$/;
const actionOf = (frame: any): string => frame.data.events[0].split('.').pop();
const dataOf = (frame: any): unknown => JSON.parse(frame.data.payload.data_json).data;
/** The state of `stationWithClient`'s station: its schedule, on-air and now-playing rows and three records. */
const STATE = STATION_START_ROWS.length + 3;

describe('realtime feed: resume from a cursor (lastEventId)', () => {
  let server: TestServer;
  let gateway: TestGateway;
  before(async () => {
    server = await sharedServer();
    gateway = await startTestGateway();
  });
  after(closeTestGateways);

  /**
   * A station (with the schedule, on-air and now-playing rows it has from its creation) and three content
   * records, and a client (resume asked: `lastEventId=`) that has its state: six rows.
   */
  async function stationWithClient() {
    const station = await createStation(server.url);
    const records = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of records) await writeRow(server.svc, station.id, 'content', id, { id, revision: 1 });
    const client = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id)));
    await client.waitSynced();
    return { station, records, client };
  }

  it('lastEventId= (empty) asks for the full state plus synced: every event and the synced message carry data.cursor; synced follows the state of every channel and names it fresh in data.states', async () => {
    const { station, client } = await stationWithClient();
    const synced = await client.waitSynced();
    expect(client.messages.map((m) => m.type)).to.deep.equal([...Array(STATE).fill('event'), 'synced']);
    expect(client.events().map((f) => actionOf(f))).to.deep.equal(Array(STATE).fill('create')); // the full state
    expect(Object.keys(synced.data)).to.deep.equal(['cursor', 'states']); // `states`, never `channels` (an array in every event)
    expect(synced.data.states).to.deep.equal({ [channelOf(station.id)]: 'fresh' });
    for (const message of client.messages) expect(message.data.cursor).to.match(CURSOR);
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'Live' } });
    const live = await client.waitEvent((f) => f.data.payload.kind === 'now-playing' && actionOf(f) === 'update');
    expect(live.data.cursor).to.match(CURSOR);
    expect(live.data.cursor).to.not.equal(synced.data.cursor); // the position moved
    client.close();
  });

  it('resuming sends only what changed since the cursor: one update per changed row with its current data, a delete per removed row, then synced (resumed) and live events', async () => {
    const { station, records, client } = await stationWithClient();
    const cursor = client.lastCursor()!;
    client.close();
    // While away: a record revised twice, one removed, one published, now-playing started.
    await writeRow(server.svc, station.id, 'content', records[0], { id: records[0], revision: 2 });
    await writeRow(server.svc, station.id, 'content', records[0], { id: records[0], revision: 3 });
    await removeRow(server.svc, station.id, 'content', records[1]);
    const added = randomUUID();
    await writeRow(server.svc, station.id, 'content', added, { id: added, revision: 1 });
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'While away' } });
    await gatewayHas(gateway.url, station.id, (f) => f.data.payload.data_json.includes('While away'));

    const back = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id), cursor));
    const synced = await back.waitSynced();
    expect(synced.data.states).to.deep.equal({ [channelOf(station.id)]: 'resumed' });
    const replay = back.events();
    expect(replay.map((f) => [f.data.payload.$id, actionOf(f)])).to.deep.equal([
      [`content:${records[0]}`, 'update'],
      [`content:${records[1]}`, 'delete'],
      [`content:${added}`, 'update'],
      ['now-playing:current', 'update'],
    ]);
    expect(dataOf(replay[0])).to.deep.equal({ id: records[0], revision: 3 });
    expect(dataOf(replay[1])).to.equal(null);
    expect(back.messages.some((m) => m.type === 'reset')).to.equal(false);
    for (const frame of replay) expect(frame.data.cursor).to.match(CURSOR);

    await writeRow(server.svc, station.id, 'content', records[2], { id: records[2], revision: 2 });
    await back.waitEvent((f) => f.data.payload.$id === `content:${records[2]}`);

    // Nothing changed since the synced cursor: a resume sends no event at all.
    const latest = back.lastCursor()!;
    back.close();
    const again = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id), latest));
    expect((await again.waitSynced()).data.states[channelOf(station.id)]).to.equal('resumed');
    expect(again.events()).to.deep.equal([]);
    again.close();
  });

  it('messages before synced carry the cursor the connection started from: a client cut off during its state gets it all again', async () => {
    const { station, client } = await stationWithClient();
    const midState = client.events()[1].data.cursor; // a fresh connection: no channel positioned yet
    client.close();
    const back = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id), midState));
    expect((await back.waitSynced()).data.states).to.deep.equal({ [channelOf(station.id)]: 'fresh' });
    expect(back.events()).to.have.length(STATE);
    // A resumed connection's replay carries the position it resumed from.
    const cursor = back.lastCursor()!;
    back.close();
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'X' } });
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'Y' } });
    await gatewayHas(gateway.url, station.id, (f) => f.data.payload.data_json.includes('"Y"'));
    const again = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id), cursor));
    await again.waitSynced();
    expect(again.events().map((f) => f.data.cursor)).to.deep.equal([cursor]);
    again.close();
  });

  it('a cursor from before a module of the station was switched on or off is a reset (rows were held back from it)', async () => {
    const { station, client } = await stationWithClient();
    const cursor = client.lastCursor()!;
    expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { nowPlaying: false } })).status).to.equal(200);
    await eventually(() => client.closeCode === 1012);
    const back = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id), cursor));
    expect((await back.waitSynced()).data.states).to.deep.equal({ [channelOf(station.id)]: 'reset' });
    back.close();
  });

  it('a cursor that does not parse, or names another channel, is a reset with the full state — never an error', async () => {
    const { station, client } = await stationWithClient();
    const other = await createStation(server.url);
    const otherClient = await FeedClient.connect(gateway.url, withCursor(realtimePath(other.id)));
    const foreign = (await otherClient.waitSynced()).data.cursor;
    otherClient.close();
    client.close();
    for (const cursor of ['garbage!', 'c1.zzzz', 'x'.repeat(500), foreign]) {
      const back = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id), cursor));
      const synced = await back.waitSynced();
      expect(synced.data.states, cursor).to.deep.equal({ [channelOf(station.id)]: 'reset' });
      expect(back.messages[0]).to.deep.equal({ type: 'reset', data: { channel: channelOf(station.id) } });
      expect(back.events().map((f) => actionOf(f))).to.deep.equal(Array(STATE).fill('create')); // the full state
      expect(back.closeCode).to.equal(null);
      back.close();
    }
  });

  it('a channel the cursor does not name gets the full state as fresh; a multi-channel cursor resumes each channel', async () => {
    const { station, client } = await stationWithClient();
    const cursor = client.lastCursor()!;
    client.close();
    const second = await createStation(server.url);
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'A' } });
    await gatewayHas(gateway.url, station.id, (f) => f.data.payload.data_json.includes('"A"'));
    const both = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id, second.id), cursor));
    const synced = await both.waitSynced();
    expect(synced.data.states).to.deep.equal({ [channelOf(station.id)]: 'resumed', [channelOf(second.id)]: 'fresh' });
    expect(both.events().map((f) => [f.data.payload.station_id, f.data.payload.$id])).to.have.deep.members([
      [station.id, 'now-playing:current'],
      ...STATION_START_ROWS.map((rowId) => [second.id, rowId]),
    ]);
    // A live event's cursor names both channels: resuming with it resumes both.
    await writeRow(server.svc, second.id, 'now-playing', 'current', { track: { title: 'B' } });
    const live = await both.waitEvent(
      (f) => f.data.payload.station_id === second.id && f.data.payload.kind === 'now-playing' && actionOf(f) === 'update',
    );
    both.close();
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'A2' } });
    await gatewayHas(gateway.url, station.id, (f) => f.data.payload.data_json.includes('"A2"'));
    const back = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id, second.id), live.data.cursor));
    expect((await back.waitSynced()).data.states).to.deep.equal({
      [channelOf(station.id)]: 'resumed',
      [channelOf(second.id)]: 'resumed',
    });
    expect(back.events().map((f) => [f.data.payload.station_id, dataOf(f)])).to.deep.equal([[station.id, { track: { title: 'A2' } }]]);
    back.close();
  });

  it('a cursor of another epoch (history reset or restored) or beyond the station history is a reset', async () => {
    const { station, client } = await stationWithClient();
    const cursor = client.lastCursor()!;
    client.close();
    // A position beyond the station's sequence: a history restored from a backup.
    const beyond = cursor.replace(/~([0-9a-z]+)~([0-9a-f])$/, (_m, _seq, mask) => `~zzzz~${mask}`);
    expect(beyond).to.not.equal(cursor);
    const ahead = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id), beyond));
    expect((await ahead.waitSynced()).data.states).to.deep.equal({ [channelOf(station.id)]: 'reset' });
    ahead.close();

    await server.svc.db('stations').where({ id: station.id }).update({ feed_epoch: 'restored' });
    const fresh = await startTestGateway(); // loads the station's history anew
    const back = await FeedClient.connect(fresh.url, withCursor(realtimePath(station.id), cursor));
    expect((await back.waitSynced()).data.states).to.deep.equal({ [channelOf(station.id)]: 'reset' });
    expect(back.events()).to.have.length(STATE);
    back.close();
    await fresh.close();
  });

  it('tombstones older than the 24 h history are pruned; a cursor from before the pruned history is a reset, a younger one resumes with the delete', async () => {
    const { station, records, client } = await stationWithClient();
    const cursor = client.lastCursor()!;
    client.close();
    const watcher = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id)));
    await watcher.waitSynced();
    await removeRow(server.svc, station.id, 'content', records[0]);
    await removeRow(server.svc, station.id, 'content', records[1]);
    await watcher.waitEvent((f) => f.data.payload.entry === records[1] && actionOf(f) === 'delete');
    watcher.close();
    const kept = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id), cursor));
    await kept.waitSynced();
    expect(kept.events().map((f) => [f.data.payload.entry, actionOf(f)])).to.deep.equal([
      [records[0], 'delete'],
      [records[1], 'delete'],
    ]);
    kept.close();

    // A day and an hour later, the first tombstone goes; the younger one stays.
    const old = new Date(Date.now() - 25 * 3600_000);
    await server.svc.db('feed_rows').where({ station_id: station.id, entry: records[0] }).update({ updated_at: old });
    expect(await pruneFeedHistory(server.svc.db, new Date())).to.be.at.least(1);
    const rows = await server.svc.db('feed_rows').where({ station_id: station.id, deleted: true }).select('entry');
    expect(rows.map((r: { entry: string }) => r.entry)).to.deep.equal([records[1]]);
    const fresh = await startTestGateway();
    const back = await FeedClient.connect(fresh.url, withCursor(realtimePath(station.id), cursor));
    expect((await back.waitSynced()).data.states).to.deep.equal({ [channelOf(station.id)]: 'reset' });
    back.close();
    await fresh.close();
  });

  it('the last listener of a station reconnecting within seconds (a network change) resumes from memory: no query at all', async () => {
    const own = await startTestGateway();
    const station = await createStation(server.url);
    await writeRow(server.svc, station.id, 'on-air', 'current', null);
    const client = await FeedClient.connect(own.url, withCursor(realtimePath(station.id)));
    const cursor = (await client.waitSynced()).data.cursor;
    client.close();
    await eventually(
      async () =>
        ((await fetch(`http://127.0.0.1:${own.port}/healthz`).then((r) => r.json())) as { connections: number }).connections === 0,
    );
    const before = own.queries();
    const back = await FeedClient.connect(own.url, withCursor(realtimePath(station.id), cursor));
    expect((await back.waitSynced()).data.states).to.deep.equal({ [channelOf(station.id)]: 'resumed' });
    expect(own.queries()).to.equal(before);
    back.close();
    await own.close();
  });

  it('a reconnect storm costs no database query per client: a burst of resumes that need older content is one shared read', async function () {
    this.timeout(60_000);
    const station = await createStation(server.url);
    const first = randomUUID();
    await writeRow(server.svc, station.id, 'content', first, { id: first });
    const own = await startTestGateway();
    const client = await FeedClient.connect(own.url, withCursor(realtimePath(station.id)));
    await client.waitSynced();
    const cursor = client.lastCursor()!;
    client.close();
    // 60 records published while away: more than the gateway holds with their data.
    const published: string[] = [];
    for (let i = 0; i < 60; i++) {
      const id = randomUUID();
      published.push(id);
      await writeRow(server.svc, station.id, 'content', id, { id, i });
    }
    const keeper = await FeedClient.connect(own.url, realtimePath(station.id)); // keeps the station warm
    await keeper.waitEvent((f) => f.data.payload.entry === published[59]);

    const before = own.queries();
    const storm = await Promise.all(
      Array.from({ length: 40 }, () => FeedClient.connect(own.url, withCursor(realtimePath(station.id), cursor))),
    );
    for (const back of storm) {
      await back.waitSynced(10_000);
      expect(back.events().map((f) => f.data.payload.entry)).to.deep.equal(published);
    }
    expect(own.queries() - before).to.equal(1);

    const fresh = own.queries();
    const plain = await Promise.all(Array.from({ length: 40 }, () => FeedClient.connect(own.url, realtimePath(station.id))));
    for (const back of plain) await back.waitFrames(20); // the 20 most recent content rows
    expect(own.queries() - fresh).to.equal(0);
    for (const back of [...storm, ...plain, keeper]) back.close();
    await own.close();
  });
});
