import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { createStation } from '../support/factories.ts';
import { channelOf, closeTestGateways, FeedClient, realtimePath, startTestGateway, withCursor, writeRow } from '../support/feed.ts';

// docs/realtime.md#resume-reset-and-synced: only a client that asked for resume
// meets `reset` and `synced`. A WebSocket client written to docs/realtime.md#client-guide alone (no `lastEventId` in
// its URL) receives `event` and `error` messages only; `data.cursor` on events is sent to everyone.

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

describe('realtime feed: a plain WebSocket client (no lastEventId)', () => {
  let server: TestServer;
  let gateway: TestGateway;
  before(async () => {
    server = await sharedServer();
    gateway = await startTestGateway();
  });
  after(closeTestGateways);

  /** Every message is an event whose `data.channels` is an array naming the station's channel. */
  function expectEventsOnly(client: FeedClient, stationId: string): void {
    for (const message of client.messages) {
      expect(message.type, JSON.stringify(message)).to.equal('event');
      expect(message.data.channels).to.deep.equal([channelOf(stationId)]);
      expect(message.data.cursor).to.match(/^[A-Za-z0-9._~-]{1,400}$/);
    }
  }

  /** Writes a row and waits for its live event: `synced` would have come before it, in the same turn as the state. */
  async function liveEvent(client: FeedClient, stationId: string): Promise<void> {
    const id = randomUUID();
    await writeRow(server.svc, stationId, 'content', id, { id });
    await client.waitEvent((f) => f.data.payload.entry === id, 10_000);
  }

  it('gets the state and live events as event messages only: no synced, no reset', async () => {
    const station = await createStation(server.url);
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'One' } });
    // The state: the station's schedule, on-air and now-playing rows (there from its creation).
    const client = await FeedClient.ready(gateway.url, realtimePath(station.id), 3);
    await liveEvent(client, station.id);
    expect(client.messages).to.have.length(4);
    expectEventsOnly(client, station.id);
    client.close();

    // The same connection asking for resume with an empty lastEventId: the full state plus synced, all fresh.
    const resuming = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id)));
    const synced = await resuming.waitSynced();
    expect(synced.data).to.have.keys('cursor', 'states');
    expect(synced.data.states).to.deep.equal({ [channelOf(station.id)]: 'fresh' });
    expect(resuming.messages.map((m) => m.type)).to.deep.equal(['event', 'event', 'event', 'event', 'synced']);
    resuming.close();

    // And the plain client after it (the gateway keeps started connections' bytes): still events only.
    const again = await FeedClient.ready(gateway.url, realtimePath(station.id), 4);
    await liveEvent(again, station.id);
    expectEventsOnly(again, station.id);
    again.close();
  });

  it('even with a state the gateway cannot resume (a Last-Event-ID header, a history restored since): events only, never reset', async () => {
    const station = await createStation(server.url);
    await writeRow(server.svc, station.id, 'on-air', 'current', null);
    const first = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id)));
    const cursor = (await first.waitSynced()).data.cursor;
    first.close();

    // A header is not the URL parameter: this client did not ask for resume.
    const withHeader = await FeedClient.ready(gateway.url, realtimePath(station.id), 1, { headers: { 'Last-Event-ID': 'garbage!' } });
    await liveEvent(withHeader, station.id);
    expectEventsOnly(withHeader, station.id);
    withHeader.close();

    // The station's history restored from a backup: a resuming client gets reset, a plain one its state.
    await server.svc.db('stations').where({ id: station.id }).update({ feed_epoch: 'restored' });
    const fresh = await startTestGateway();
    const resuming = await FeedClient.connect(fresh.url, withCursor(realtimePath(station.id), cursor));
    expect((await resuming.waitSynced()).data.states).to.deep.equal({ [channelOf(station.id)]: 'reset' });
    expect(resuming.messages[0]).to.deep.equal({ type: 'reset', data: { channel: channelOf(station.id) } });
    resuming.close();
    const plain = await FeedClient.ready(fresh.url, realtimePath(station.id), 2);
    await liveEvent(plain, station.id);
    expectEventsOnly(plain, station.id);
    plain.close();
    await fresh.close();
  });

  it('a refused channel is one error message, then close 1008', async () => {
    const client = new FeedClient(gateway.url + realtimePath(`st_unknown${randomUUID().slice(0, 8)}`));
    const closed = await client.closed;
    expect(closed.code).to.equal(1008);
    expect(client.messages.map((m) => m.type)).to.deep.equal(['error']);
    expect(client.messages[0].data.code).to.equal('NOT_FOUND');
  });
});
