import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { admin } from '../support/http.ts';
import { createStation, eventually } from '../support/factories.ts';
import { presentNowPlaying } from '../../src/domains/nowPlaying/presenter.ts';
import type { TrackRow } from '../../src/domains/nowPlaying/model.ts';
import {
  channelOf,
  closeTestGateways,
  FeedClient,
  realtimePath,
  removeRow,
  startTestGateway,
  STATION_START_ROWS,
  writeRow,
} from '../support/feed.ts';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

/** The state of a station with no content: the rows every station starts with (schedule, on-air, now-playing). */
const START = STATION_START_ROWS.length;

describe('realtime feed: current state and events (/v1/realtime)', () => {
  let server: TestServer;
  let gateway: TestGateway;
  before(async () => {
    server = await sharedServer();
    gateway = await startTestGateway();
  });
  after(closeTestGateways);

  it('on open sends one create event per current row: schedule, on-air, now-playing and the 20 most recently published content rows', async () => {
    const station = await createStation(server.url);
    const { svc } = server;
    await writeRow(svc, station.id, 'schedule', 'current', {
      contractVersion: 1,
      timezone: 'Europe/Berlin',
      broadcasts: [],
      truncated: false,
    });
    await writeRow(svc, station.id, 'on-air', 'current', null);
    await writeRow(svc, station.id, 'now-playing', 'current', { track: { artist: 'A', title: 'T' } });
    const records = Array.from({ length: 23 }, () => randomUUID());
    for (const [i, id] of records.entries()) await writeRow(svc, station.id, 'content', id, { id, title: `Record ${i}` });
    await removeRow(svc, station.id, 'content', records[22]); // unpublished: not part of the state

    const client = await FeedClient.connect(gateway.url, realtimePath(station.id));
    const frames = await client.waitFrames(23);
    expect(frames.every((f) => f.type === 'event')).to.equal(true);
    expect(frames.slice(0, 3).map((f) => f.data.payload.kind)).to.deep.equal(['schedule', 'on-air', 'now-playing']);
    const contentIds = frames.slice(3).map((f) => f.data.payload.entry);
    expect(contentIds).to.deep.equal(records.slice(2, 22).reverse()); // newest first, the removed one left out
    for (const frame of frames) expect(frame.data.events[0]).to.match(/\.create$/);

    const nowPlaying = frames[2];
    expect(Object.keys(nowPlaying)).to.deep.equal(['type', 'data']);
    expect(Object.keys(nowPlaying.data)).to.deep.equal(['events', 'channels', 'timestamp', 'payload', 'cursor']);
    expect(nowPlaying.data.cursor).to.match(/^[A-Za-z0-9._~-]{1,400}$/);
    expect(nowPlaying.data.events).to.deep.equal([
      `stations.${station.id}.feed.rows.now-playing:current.create`,
      `stations.${station.id}.feed.rows.*.create`,
    ]);
    expect(nowPlaying.data.channels).to.deep.equal([channelOf(station.id)]);
    expect(nowPlaying.data.timestamp).to.equal(nowPlaying.data.payload.$updatedAt);
    expect(Object.keys(nowPlaying.data.payload)).to.deep.equal(['$id', 'station_id', 'kind', 'entry', 'data_json', '$updatedAt']);
    expect(nowPlaying.data.payload).to.include({
      $id: 'now-playing:current',
      station_id: station.id,
      kind: 'now-playing',
      entry: 'current',
    });
    expect(nowPlaying.data.payload.data_json).to.be.a('string');
    expect(JSON.parse(nowPlaying.data.payload.data_json)).to.deep.equal({
      protocol: 'waveline.public.v1',
      stationId: station.id,
      type: 'now-playing',
      data: { track: { artist: 'A', title: 'T' } },
    });
    expect(JSON.parse(frames[1].data.payload.data_json).data).to.equal(null); // nothing on air
    expect(frames[3].data.payload.entry).to.equal(records[21]);
    client.close();
  });

  it('sends each change as it is written: create for a new row, update for an existing one, .delete with null data for a removed one', async () => {
    const station = await createStation(server.url);
    const { svc } = server;
    const client = await FeedClient.ready(gateway.url, realtimePath(station.id), START);
    const prefix = `stations.${station.id}.feed.rows`;
    expect(client.events().map((f) => f.data.events[0])).to.deep.equal(STATION_START_ROWS.map((id) => `${prefix}.${id}.create`));

    // now-playing ingest: the row is there from the station's creation (track null), so an update
    await writeRow(svc, station.id, 'now-playing', 'current', { track: { title: 'One' } });
    let frame = await client.waitEvent((f) => f.data.payload.kind === 'now-playing' && f.data.events[0].endsWith('.update'));
    expect(frame.data.events).to.deep.equal([`${prefix}.now-playing:current.update`, `${prefix}.*.update`]);
    expect(JSON.parse(frame.data.payload.data_json).data).to.deep.equal({ track: { title: 'One' } });
    await writeRow(svc, station.id, 'now-playing', 'current', { track: { title: 'Two' } });
    frame = await client.waitEvent(
      (f) => f.data.events[0] === `${prefix}.now-playing:current.update` && JSON.parse(f.data.payload.data_json).data.track.title === 'Two',
    );

    // publish, republish, unpublish
    const recordId = randomUUID();
    await writeRow(svc, station.id, 'content', recordId, { id: recordId, revision: 1 });
    frame = await client.waitEvent((f) => f.data.events[0] === `${prefix}.content:${recordId}.create`);
    expect(frame.data.payload).to.include({ $id: `content:${recordId}`, kind: 'content', entry: recordId, station_id: station.id });
    await writeRow(svc, station.id, 'content', recordId, { id: recordId, revision: 2 });
    await client.waitEvent((f) => f.data.events[0] === `${prefix}.content:${recordId}.update`);
    await removeRow(svc, station.id, 'content', recordId);
    frame = await client.waitEvent((f) => f.data.events[0].endsWith('.delete'));
    expect(frame.data.events).to.deep.equal([`${prefix}.content:${recordId}.delete`, `${prefix}.*.delete`]);
    expect(JSON.parse(frame.data.payload.data_json)).to.deep.equal({
      protocol: 'waveline.public.v1',
      stationId: station.id,
      type: 'content',
      data: null,
    });

    // schedule change
    await writeRow(svc, station.id, 'schedule', 'current', { contractVersion: 1, broadcasts: [{ id: 'b1' }], truncated: false });
    frame = await client.waitEvent((f) => f.data.payload.kind === 'schedule' && f.data.events[0].endsWith('.update'));
    expect(frame.data.events[0]).to.equal(`${prefix}.schedule:current.update`);
    expect(JSON.parse(frame.data.payload.data_json).data.broadcasts).to.deep.equal([{ id: 'b1' }]);

    // a record published again after its removal is new again
    await writeRow(svc, station.id, 'content', recordId, { id: recordId, revision: 3 });
    await eventually(() => client.eventsOf(`content:${recordId}`).length === 4);
    expect(client.eventsOf(`content:${recordId}`).map((f) => f.data.events[0].split('.').pop())).to.deep.equal([
      'create',
      'update',
      'delete',
      'create',
    ]);
    client.close();
  });

  it('delivers only the subscribed stations, each event naming its own channel and station', async () => {
    const a = await createStation(server.url);
    const b = await createStation(server.url);
    const onlyA = await FeedClient.ready(gateway.url, realtimePath(a.id), START);
    const both = await FeedClient.ready(gateway.url, realtimePath(a.id, b.id), 2 * START);
    await writeRow(server.svc, b.id, 'now-playing', 'current', { track: 'b' });
    await writeRow(server.svc, a.id, 'now-playing', 'current', { track: 'a' });
    await both.waitFrames(2 * START + 2);
    await onlyA.waitFrames(START + 1);
    expect(both.events().map((f) => [f.data.channels, f.data.payload.station_id])).to.have.deep.members([
      ...Array.from({ length: START }, () => [[channelOf(a.id)], a.id]),
      ...Array.from({ length: START }, () => [[channelOf(b.id)], b.id]),
      [[channelOf(a.id)], a.id],
      [[channelOf(b.id)], b.id],
    ]);
    // b's event reached `both` after a's was sent; one more look at `onlyA` finds nothing of b
    await writeRow(server.svc, a.id, 'now-playing', 'current', { track: 'a2' });
    await onlyA.waitFrames(START + 2);
    expect(onlyA.events().every((f) => f.data.payload.station_id === a.id && f.data.channels[0] === channelOf(a.id))).to.equal(true);
    onlyA.close();
    both.close();
  });

  it('starts a connection with now-playing as old as it is now: elapsed time and freshness derived at connect, not when the row was written', async () => {
    const station = await createStation(server.url);
    const observedAt = new Date(Date.now() - 26_000);
    const track = {
      id: randomUUID(),
      artist: 'A',
      title: 'T',
      album: null,
      duration_seconds: 240,
      artwork_url: null,
      source_track_id: null,
      is_playing: true,
      observed_at: observedAt,
      received_at: observedAt,
      sort_at: observedAt,
      receipt_seq: 1,
    };
    // As the ingest wrote it when the track was new: fresh, age 0.
    const written = presentNowPlaying(
      { id: station.id, timezone: 'Europe/Berlin', nowPlayingFreshnessSeconds: 20 },
      track as unknown as TrackRow,
      observedAt,
    );
    expect(written.freshness).to.include({ status: 'fresh', ageSeconds: 0 });
    await writeRow(server.svc, station.id, 'now-playing', 'current', written);
    const client = await FeedClient.ready(gateway.url, realtimePath(station.id), START);
    const data = JSON.parse(client.eventsOf('now-playing:current')[0].data.payload.data_json).data;
    expect(data.freshness.status).to.equal('stale');
    expect(data.freshness.ageSeconds).to.be.within(26, 30);
    expect(data.elapsedSeconds).to.equal(data.freshness.ageSeconds);
    expect({ ...data, elapsedSeconds: 0, freshness: { ...data.freshness, status: 'fresh', ageSeconds: 0 } }).to.deep.equal(
      JSON.parse(JSON.stringify(written)),
    );
    client.close();
  });

  it('does not send the rows of a switched-off module (now-playing for nowPlaying off); switching it back closes open connections with 1012 to resync', async () => {
    const station = await createStation(server.url, { modules: { nowPlaying: false } });
    const { svc } = server;
    await writeRow(svc, station.id, 'schedule', 'current', {
      contractVersion: 1,
      timezone: 'Europe/Berlin',
      broadcasts: [],
      truncated: false,
    });
    await writeRow(svc, station.id, 'now-playing', 'current', { track: { title: 'Hidden' } });
    const client = await FeedClient.ready(gateway.url, realtimePath(station.id), 2);
    expect(client.events().map((f) => f.data.payload.kind)).to.deep.equal(['schedule', 'on-air']);
    await writeRow(svc, station.id, 'now-playing', 'current', { track: { title: 'Still hidden' } });
    await writeRow(svc, station.id, 'on-air', 'current', null); // a change that is sent, behind the hidden one
    await client.waitEvent((f) => f.data.payload.kind === 'on-air' && f.data.events[0].endsWith('.update'));
    expect(client.events().some((f) => f.data.payload.kind === 'now-playing')).to.equal(false);

    expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { nowPlaying: true } })).status).to.equal(200);
    expect((await client.closed).code).to.equal(1012);
    const again = await eventually(async () => {
      const next = await FeedClient.connect(gateway.url, realtimePath(station.id));
      await next.waitFrames(3);
      if (next.events().some((f) => f.data.payload.kind === 'now-playing')) return next;
      next.close();
      return null;
    });
    const nowPlaying = (again as FeedClient).events().find((f) => f.data.payload.kind === 'now-playing');
    expect(JSON.parse(nowPlaying?.data.payload.data_json ?? 'null').data).to.deep.equal({ track: { title: 'Still hidden' } });
    (again as FeedClient).close();
  });

  describe('refused channels get an error message, then close 1008', () => {
    async function refused(path: string) {
      const client = new FeedClient(gateway.url + path);
      const { code } = await client.closed;
      expect(code).to.equal(1008);
      expect(client.frames).to.have.length(1);
      expect(Object.keys(client.frames[0])).to.deep.equal(['type', 'data']);
      expect(client.frames[0].type).to.equal('error');
      expect(client.frames[0].data.message).to.be.a('string').and.not.equal('');
      return client.frames[0].data.code as string;
    }

    it('no channel, a malformed channel, or another kind of channel', async () => {
      const station = await createStation(server.url);
      expect(await refused('/v1/realtime')).to.equal('VALIDATION_ERROR');
      expect(await refused('/v1/realtime?channels[]=')).to.equal('VALIDATION_ERROR');
      expect(await refused(`/v1/realtime?channels[]=stations.${station.id}.private`)).to.equal('VALIDATION_ERROR');
      expect(await refused(`/v1/realtime?channels[]=${channelOf(station.id)}&channels[]=documents`)).to.equal('VALIDATION_ERROR');
    });

    it('an unknown, inactive or public-offline station (NOT_FOUND), realtime switched off (MODULE_DISABLED)', async () => {
      expect(await refused(realtimePath('st_doesnotexist0000000'))).to.equal('NOT_FOUND');
      const inactive = await createStation(server.url, { active: false });
      expect(await refused(realtimePath(inactive.id))).to.equal('NOT_FOUND');
      const offline = await createStation(server.url, { publicOnline: false });
      expect(await refused(realtimePath(offline.id))).to.equal('NOT_FOUND');
      const noRealtime = await createStation(server.url, { modules: { realtime: false } });
      expect(await refused(realtimePath(noRealtime.id))).to.equal('MODULE_DISABLED');
      const good = await createStation(server.url);
      expect(await refused(realtimePath(good.id, offline.id))).to.equal('NOT_FOUND'); // one bad channel refuses the connection
    });

    it('the close follows the error at once for a client that waits for the server to end TCP (Node and browser WebSocket)', async () => {
      // The `ws` client of FeedClient ends TCP itself after the close handshake; the WHATWG WebSocket
      // reports the close only once the server has ended the connection (RFC 6455, 7.1.1).
      const closeAfterError = (url: string) =>
        new Promise<{ code: number; reason: string; errorCode: string; msAfterError: number }>((resolve, reject) => {
          const socket = new WebSocket(url);
          let errorAt = 0;
          let errorCode = '';
          socket.onmessage = (message) => {
            const frame = JSON.parse(String(message.data));
            if (frame.type !== 'error') return;
            errorAt = Date.now();
            errorCode = frame.data.code;
          };
          socket.onclose = (event) => resolve({ code: event.code, reason: event.reason, errorCode, msAfterError: Date.now() - errorAt });
          setTimeout(() => reject(new Error('no close within 10 s')), 10_000).unref();
        });

      // Decided after an await: the station's gate is not cached yet.
      const unknown = await closeAfterError(gateway.url + realtimePath(`st_unknown${randomUUID().slice(0, 8)}`));
      expect(unknown).to.include({ code: 1008, reason: 'NOT_FOUND', errorCode: 'NOT_FOUND' });
      expect(unknown.msAfterError).to.be.below(2000);

      // An open connection refused after an admin change.
      const station = await createStation(server.url);
      await writeRow(server.svc, station.id, 'now-playing', 'current', { track: null });
      await FeedClient.ready(gateway.url, realtimePath(station.id), 1); // the gateway now serves the station
      const open = closeAfterError(gateway.url + realtimePath(station.id));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { publicOnline: false })).status).to.equal(200);
      const offline = await open;
      expect(offline).to.include({ code: 1008, reason: 'NOT_FOUND', errorCode: 'NOT_FOUND' });
      expect(offline.msAfterError).to.be.below(2000);
    });

    it('an admin change applies on the next connection, and open connections of that station are closed', async () => {
      const station = await createStation(server.url);
      // One row, so an accepted connection shows itself with an event (a refused one gets an error).
      await writeRow(server.svc, station.id, 'now-playing', 'current', { track: null });
      /** A connection the gateway accepted (it may still hold the previous setting for a moment). */
      const accepted = () =>
        eventually<FeedClient | null>(async () => {
          const client = await FeedClient.connect(gateway.url, realtimePath(station.id));
          await client.waitFrames(1);
          if (client.frames[0].type === 'event') return client;
          client.close();
          return null;
        }) as Promise<FeedClient>;
      /** The refusal once the change has reached the gateway (its invalidation travels through Redis). */
      const refusedNow = () =>
        eventually(async () => {
          const client = new FeedClient(gateway.url + realtimePath(station.id));
          await client.closed;
          return client.frames.length === 1 && client.frames[0].type === 'error' ? (client.frames[0].data.code as string) : null;
        });

      const open = await accepted();
      expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { realtime: false } })).status).to.equal(200);
      expect(await refusedNow()).to.equal('MODULE_DISABLED');
      expect((await open.closed).code).to.equal(1008);
      expect(open.frames.at(-1).data.code).to.equal('MODULE_DISABLED');

      expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { realtime: true } })).status).to.equal(200);
      const again = await accepted();
      expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { publicOnline: false })).status).to.equal(200);
      expect(await refusedNow()).to.equal('NOT_FOUND');
      expect((await again.closed).code).to.equal(1008);
      expect(again.frames.at(-1).data.code).to.equal('NOT_FOUND');

      // Switching the station off closes its open connections like an unknown station.
      expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { publicOnline: true })).status).to.equal(200);
      const third = await accepted();
      expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { active: false })).status).to.equal(200);
      expect(await refusedNow()).to.equal('NOT_FOUND');
      expect((await third.closed).code).to.equal(1008);
      expect(third.frames.at(-1).data.code).to.equal('NOT_FOUND');
    });
  });
});
