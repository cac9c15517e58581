import { loadConfig } from '../../src/config.ts';
import { randomUUID } from 'node:crypto';
import { requiresRedis, requiresSingleRedis } from '../support/mode.ts';
import { feedSubscribers } from '../support/redisFeed.ts';
import { expect } from 'chai';
import { createBlockingRedis, type Redis } from '../../src/lib/redis.ts';
import { sharedServer, type TestServer } from '../support/server.ts';
import { createStation, eventually } from '../support/factories.ts';
import { closeTestGateways, FeedClient, realtimePath, removeRow, startTestGateway, STATION_START_ROWS, writeRow } from '../support/feed.ts';
import { inTransaction } from '../../src/lib/db.ts';
import { upsertFeedRow } from '../../src/feed/rows.ts';
import type { FeedBus } from '../../src/feed/bus.ts';

// Delivery guarantees of the gateway: no missed change, one Redis subscription per station, slow
// clients isolated, several gateways at once.

/** The state of a station with no content: the rows every station starts with (schedule, on-air, now-playing). */
const START = STATION_START_ROWS.length;

const numsub = feedSubscribers;

describe('realtime feed: delivery', () => {
  let server: TestServer;
  let redis: Redis;
  before(async () => {
    server = await sharedServer();
    redis = createBlockingRedis(loadConfig().redis);
  });
  after(async () => {
    redis.disconnect();
    await closeTestGateways();
  });

  it('subscribes on Redis to a station on its first listener and unsubscribes after the last', async function () {
    requiresRedis(this, 'counts subscribers with PUBSUB NUMSUB on a Redis server');
    const gateway = await startTestGateway();
    const station = await createStation(server.url);
    expect(await numsub(redis, station.id)).to.equal(0);
    const first = await FeedClient.connect(gateway.url, realtimePath(station.id));
    const second = await FeedClient.connect(gateway.url, realtimePath(station.id));
    await eventually(async () => (await numsub(redis, station.id)) === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await numsub(redis, station.id)).to.equal(1); // one subscription per gateway, not per socket
    first.close();
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: 'still here' });
    await second.waitFrames(1);
    expect(await numsub(redis, station.id)).to.equal(1);
    second.close();
    await eventually(async () => (await numsub(redis, station.id)) === 0);
  });

  it('after its Redis subscription drops (CLIENT KILL TYPE pubsub) and comes back, a connected client gets every missed row and ends with the state of a fresh one', async function () {
    requiresRedis(this, 'kills the subscription with CLIENT KILL on a Redis server');
    // On a cluster the same loss is shown in test/scale/redis/ (a killed master, a failover, a reshard).
    requiresSingleRedis(this, 'holds the one subscriber connection down with its reconnection delay');
    // Long enough for the four writes below to land while the subscription is down, even on a busy machine.
    const gateway = await startTestGateway({}, { redisReconnectDelayMs: 4000 });
    const station = await createStation(server.url);
    const { svc } = server;
    const kept = randomUUID();
    const removed = randomUUID();
    await writeRow(svc, station.id, 'content', kept, { v: 1 });
    await writeRow(svc, station.id, 'content', removed, { v: 1 });
    const client = await FeedClient.connect(gateway.url, realtimePath(station.id));
    await client.waitFrames(START + 2);

    const clients = (await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
    const line = clients.split('\n').find((l) => l.includes(`name=${gateway.redisClientName} `));
    const id = /\bid=(\d+)/.exec(line ?? '')?.[1];
    expect(id, 'gateway subscriber connection').to.be.a('string');
    await redis.call('CLIENT', 'KILL', 'ID', id as string, 'TYPE', 'pubsub');
    expect(await numsub(redis, station.id)).to.equal(0);

    const added = randomUUID();
    await writeRow(svc, station.id, 'now-playing', 'current', { track: 'missed' });
    await writeRow(svc, station.id, 'content', kept, { v: 2 });
    await writeRow(svc, station.id, 'content', added, { v: 1 });
    await removeRow(svc, station.id, 'content', removed);
    expect(await numsub(redis, station.id), 'the writes were published while nobody listened').to.equal(0);

    await client.waitFrames(START + 6);
    expect(
      client
        .events()
        .slice(START + 2)
        .map((f) => f.data.events[0].split('.rows.')[1]),
    ).to.deep.equal(['now-playing:current.update', `content:${kept}.update`, `content:${added}.create`, `content:${removed}.delete`]);
    const fresh = await FeedClient.connect(gateway.url, realtimePath(station.id));
    await fresh.waitFrames(START + 2);
    expect(client.state()).to.deep.equal(fresh.state());
    expect(client.state().size).to.equal(START + 2);

    // and live delivery goes on
    await writeRow(svc, station.id, 'now-playing', 'current', { track: 'live again' });
    await client.waitFrames(START + 7);
    client.close();
    fresh.close();
  });

  it('a change whose bus message was lost (hole in the sequence) is read back and sent', async () => {
    const gateway = await startTestGateway();
    const station = await createStation(server.url);
    const client = await FeedClient.ready(gateway.url, realtimePath(station.id), START);
    const lostBus: FeedBus = { publish: async () => {} };
    const lost = randomUUID();
    await inTransaction(server.svc.db, (tx) =>
      upsertFeedRow(tx, lostBus, { stationId: station.id, kind: 'content', entry: lost, data: { lost: true } }),
    );
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: 'after the lost one' });
    await client.waitFrames(START + 2);
    expect(
      client
        .events()
        .slice(START)
        .map((f) => f.data.payload.$id),
    ).to.have.members(['now-playing:current', `content:${lost}`]);
    expect(JSON.parse(client.eventsOf(`content:${lost}`)[0].data.payload.data_json).data).to.deep.equal({ lost: true });
    client.close();
  });

  it('two gateways on different ports send the same frames for every event', async () => {
    const one = await startTestGateway();
    const two = await startTestGateway();
    expect(one.port).to.not.equal(two.port);
    const station = await createStation(server.url);
    const a = await FeedClient.ready(one.url, realtimePath(station.id), START);
    const b = await FeedClient.ready(two.url, realtimePath(station.id), START);
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) await writeRow(server.svc, station.id, 'content', id, { id });
    await a.waitFrames(START + 3);
    await b.waitFrames(START + 3);
    expect(a.frames).to.deep.equal(b.frames); // the same bytes for the same change
    expect(
      a
        .events()
        .slice(START)
        .map((f) => f.data.payload.entry),
    ).to.deep.equal(ids);
    a.close();
    b.close();
  });

  it('a slow client is closed past the buffered-bytes limit and never slows the others', async function () {
    this.timeout(60_000);
    const gateway = await startTestGateway({ GATEWAY_MAX_BACKPRESSURE_BYTES: String(256 * 1024) });
    const station = await createStation(server.url);
    const fast = await FeedClient.ready(gateway.url, realtimePath(station.id), START);
    const slow = await FeedClient.ready(gateway.url, realtimePath(station.id), START);
    slow.ws.pause(); // stops reading: the kernel buffers fill, then the gateway's
    const big = 'x'.repeat(512 * 1024);
    const rows = 80; // 40 MiB: far more than the socket buffers of a localhost connection
    for (let i = 0; i < rows; i++) await writeRow(server.svc, station.id, 'content', randomUUID(), { i, big });
    await fast.waitFrames(START + rows, 30_000);
    expect(
      fast
        .events()
        .slice(START)
        .map((f) => JSON.parse(f.data.payload.data_json).data.i),
    ).to.deep.equal([...Array(rows).keys()]);
    slow.ws.resume();
    await slow.closed;
    expect(slow.frames.length).to.be.lessThan(START + rows);
    expect(fast.closeCode).to.equal(null);
    fast.close();
  });
});
