import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { loadConfig, type RedisTarget } from '../../../src/config.ts';
import { createDb, inTransaction, type Db } from '../../../src/lib/db.ts';
import { useRedisNames } from '../../../src/lib/keys.ts';
import { clusterOf, createRedis, type Redis } from '../../../src/lib/redis.ts';
import { RedisFeedBus } from '../../../src/feed/bus.ts';
import { upsertFeedRow } from '../../../src/feed/rows.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { FeedClient, realtimePath, SseFeedClient, ssePath, STATION_START_ROWS, withCursor, type EventFrame } from '../../support/feed.ts';
import {
  CLUSTER_PORTS,
  closeNodes,
  failover,
  feedSlot,
  killMaster,
  masters,
  moveSlot,
  node,
  ownerOf,
  restoreCluster,
  SEEDS,
  shardSubscribers,
  startClusterRole,
  stationIdsOnEveryMaster,
  type ClusterRole,
} from './support.ts';

// The realtime feed on a Redis Cluster, with real web and gateway processes (REDIS_CLUSTER_URLS): a
// station's channel is a sharded channel on the master owning its slot, a gateway subscribes only to the
// stations its clients hold, and it carries on by itself through a live reshard of a subscribed slot, a
// CLUSTER FAILOVER and a killed master — no change missed, none twice, frames again within 5 s.

const START = STATION_START_ROWS.length;
/** How soon after the cluster completed a change frames must flow again. */
const BACK_WITHIN_MS = 5000;

describe('Redis Cluster: the realtime feed', function () {
  this.timeout(180_000);
  let web: ClusterRole;
  let gateway: ClusterRole;
  let ws: string;
  let db: Db;
  let publisher: Redis;
  let bus: RedisFeedBus;
  const target: RedisTarget = { kind: 'cluster', seeds: SEEDS.split(',') };

  before(async () => {
    await restoreCluster();
    // This process writes feed rows as a web process on the cluster would (the names of the cluster).
    useRedisNames(target);
    publisher = createRedis(target);
    bus = new RedisFeedBus(publisher);
    db = createDb(loadConfig().databaseUrl, { max: 4 });
    [web, gateway] = await Promise.all([startClusterRole('web'), startClusterRole('gateway')]);
    ws = gateway.url.replace('http', 'ws');
  });

  after(async () => {
    await Promise.all([web?.stop(), gateway?.stop()]);
    useRedisNames(loadConfig().redis);
    publisher?.disconnect();
    await db?.destroy();
    await restoreCluster().catch(() => undefined);
    closeNodes();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') process.stderr.write(`gateway output:\n${gateway.output()}\nweb output:\n${web.output()}\n`);
  });

  const write = (stationId: string, entry: string, data: unknown = { at: Date.now() }) =>
    inTransaction(db, (tx) => upsertFeedRow(tx, bus, { stationId, kind: 'content', entry, data }));

  const entryOf = (frame: EventFrame): string => frame.data.payload.entry;

  it("puts stations' channels on all three masters, subscribed only while the gateway's clients hold them", async () => {
    const picked = await stationIdsOnEveryMaster('st-shard');
    expect(new Set(picked.map((p) => p.master)).size, 'one station on each master').to.equal(3);
    for (const { id } of picked) await createStation(web.url, { id });
    const unheld = (await stationIdsOnEveryMaster('st-unheld'))[0];
    await createStation(web.url, { id: unheld.id });

    const clients = await Promise.all(picked.map(({ id }) => FeedClient.ready(ws, realtimePath(id), START)));
    for (const { id, master } of picked) {
      await eventually(async () => (await shardSubscribers(id)).get(master) === 1);
      const counts = await shardSubscribers(id);
      for (const [port, count] of counts) expect(count, `SHARDNUMSUB of ${id} on ${port}`).to.equal(port === master ? 1 : 0);
    }
    // A station nobody holds on this gateway: not subscribed anywhere, so its frames never reach it.
    await write(unheld.id, randomUUID());
    expect([...(await shardSubscribers(unheld.id)).values()]).to.deep.equal([0, 0, 0]);

    // Frames of each station reach its client only.
    const entries: string[] = picked.map(() => randomUUID());
    await Promise.all(picked.map(({ id }, i) => write(id, entries[i])));
    for (const [i, client] of clients.entries()) {
      await client.waitEvent((f) => entryOf(f) === entries[i]);
      expect(
        client
          .events()
          .filter((f) => entries.includes(entryOf(f)))
          .map(entryOf),
      ).to.deep.equal([entries[i]]);
    }
    // SUNSUBSCRIBE after the last listener's linger.
    clients[0].close();
    await eventually(async () => (await shardSubscribers(picked[0].id)).get(picked[0].master) === 0, { timeoutMs: 10_000 });
    for (const client of clients.slice(1)) client.close();
  });

  it('re-reads the slot map only after a sign of a change, or every few seconds: an idle web and gateway send few CLUSTER SLOTS', async () => {
    // The gateway holds a station, so its sharded subscribers are up.
    const station = await createStation(web.url, { id: `st-idle-${Date.now().toString(36)}` });
    const client = await FeedClient.ready(ws, realtimePath(station.id), START);
    const slotReads = async () => {
      let calls = 0;
      for (const port of CLUSTER_PORTS)
        calls += Number(/cmdstat_cluster\|slots:calls=(\d+)/.exec(String(await node(port).info('commandstats')))?.[1] ?? 0);
      return calls;
    };
    const before = await slotReads();
    await new Promise((resolve) => setTimeout(resolve, 6000));
    const reads = (await slotReads()) - before;
    client.close();
    // A read every second by each of the web's clients and the gateway's made 20 or more in 6 s; now the
    // web's clients read every SLOTS_REFRESH_MS (10 s) and the gateway's every 5 s (src/gateway/bridge.ts).
    expect(reads, 'CLUSTER SLOTS in 6 s of an idle web and gateway').to.be.at.most(6);
  });

  /**
   * A station with a live WebSocket client, a live SSE client and a WebSocket client that left before the
   * change (its cursor kept), rows written all along; `change` disrupts the station's shard. Then: the
   * frames flow again within 5 s of the change completing; every row reaches the live clients once; the
   * resumed client gets exactly the rows after its cursor, once each.
   */
  async function throughChange(name: string, change: (slot: number, owner: number) => Promise<void>): Promise<{ unpublished: number }> {
    const station = await createStation(web.url, { id: `st-${name}-${Date.now().toString(36)}` });
    const slot = feedSlot(station.id);
    const owner = await ownerOf(slot);
    const live = await FeedClient.ready(ws, realtimePath(station.id), START);
    const sse = await SseFeedClient.open(`${gateway.url}${ssePath(station.id)}`);
    await sse.waitSynced();
    const leaving = await FeedClient.ready(ws, realtimePath(station.id), START);
    const before = randomUUID();
    await write(station.id, before);
    await leaving.waitEvent((f) => entryOf(f) === before);
    const cursor = leaving.lastCursor() as string;
    leaving.close();
    await eventually(async () => (await shardSubscribers(station.id)).get(owner) === 1);
    // The writer's client reads the slot map now (by itself it re-reads it every SLOTS_REFRESH_MS, or after a
    // MOVED): after the previous test's failover it may still send to the demoted master, which, a replica
    // of the same shard, takes a SPUBLISH and passes it on, so a killed master's outage would not reach it.
    await new Promise<void>((resolve) => {
      const cluster = clusterOf(publisher);
      if (cluster) cluster.refreshSlotsCache(() => resolve());
      else resolve();
    });

    // Rows written all along the change, one every 50 ms. A row whose publish failed (no master for the
    // slot) is in Postgres but on no channel: only the gateway's catch-up read after it subscribed again
    // brings it, since no later row follows to reveal the hole.
    let writing = true;
    let unpublished = 0;
    const writer = (async () => {
      while (writing) {
        await write(station.id, randomUUID()).catch(() => unpublished++);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    try {
      await change(slot, owner);
    } finally {
      writing = false;
      await writer;
    }
    const completed = Date.now();
    // Every row written so far reaches the live clients with no further write.
    const written = (await db('feed_rows').where({ station_id: station.id, kind: 'content' }).select('entry')).map(
      (r) => r.entry as string,
    );
    const contentOf = (client: FeedClient) =>
      client
        .events()
        .filter((f) => f.data.payload.kind === 'content')
        .map(entryOf);
    await eventually(() => written.every((entry) => contentOf(live).includes(entry)), { timeoutMs: BACK_WITHIN_MS });
    const caughtUpMs = Date.now() - completed;
    // And a new row goes out at once.
    const after = randomUUID();
    await write(station.id, after);
    await live.waitEvent((f) => entryOf(f) === after, BACK_WITHIN_MS - (Date.now() - completed));
    const backAfterMs = Date.now() - completed;
    await sse.waitMessage((d) => d.type === 'event' && d.data?.payload?.entry === after, BACK_WITHIN_MS);

    const stored = [...written, after];
    const seen = contentOf(live);
    expect([...seen].sort(), 'every row once on the live WebSocket').to.deep.equal([...stored].sort());
    const sseSeen = sse
      .data()
      .filter((d) => d.type === 'event' && d.data.payload.kind === 'content')
      .map((d) => d.data.payload.entry as string);
    expect([...sseSeen].sort(), 'every row once on SSE').to.deep.equal([...stored].sort());

    const resumed = await FeedClient.connect(ws, withCursor(realtimePath(station.id), cursor));
    await resumed.waitSynced();
    const replayed = resumed.events().map(entryOf);
    expect([...replayed].sort(), 'the resumed client: the rows after its cursor, once each').to.deep.equal(
      stored.filter((entry) => entry !== before).sort(),
    );
    process.stderr.write(
      `      ${name}: every row ${caughtUpMs} ms, a new row ${backAfterMs} ms after the cluster completed the change; ${stored.length} rows, ${unpublished} not published\n`,
    );
    live.close();
    sse.close();
    resumed.close();
    return { unpublished };
  }

  it('carries on through a live reshard of a subscribed slot (SETSLOT/MIGRATE, as redis-cli --cluster reshard)', async () => {
    await throughChange('reshard', async (slot, owner) => {
      const to = (await masters()).find((port) => port !== owner)!;
      await moveSlot(slot, to);
    });
  });

  it('carries on through a CLUSTER FAILOVER of the master owning the station', async () => {
    await throughChange('failover', async (slot, owner) => {
      await failover(owner, slot);
    });
  });

  it('carries on through a killed master (its replica promoted), and the node comes back as a replica', async () => {
    const { unpublished } = await throughChange('killed', async (slot, owner) => {
      await killMaster(owner, slot);
    });
    expect(unpublished, 'rows written while the slot had no master (their publish failed)').to.be.greaterThan(0);
    await restoreCluster();
    expect((await masters()).length).to.equal(3);
  });
});
