import { expect } from 'chai';
import { feedListener } from '../support/redisFeed.ts';
import { sharedServer, type TestServer } from '../support/server.ts';
import { createStation, eventually } from '../support/factories.ts';
import { inTransaction } from '../../src/lib/db.ts';
import { keys } from '../../src/lib/keys.ts';
import { deleteFeedRow, feedRowsSince, upsertFeedRow } from '../../src/feed/rows.ts';
import type { FeedMessage } from '../../src/feed/bus.ts';

describe('feed rows', () => {
  let server: TestServer;
  let sub: ReturnType<typeof feedListener>;
  before(async () => {
    server = await sharedServer();
    sub = feedListener();
  });
  after(() => sub.disconnect());

  /** The station's feed position before the test writes: its creation wrote its schedule, on-air and now-playing rows. */
  const seqOf = async (stationId: string): Promise<number> =>
    Number((await server.svc.db('stations').where({ id: stationId }).first<{ feed_seq: number }>('feed_seq')).feed_seq);

  async function listen(stationId: string): Promise<FeedMessage[]> {
    const got: FeedMessage[] = [];
    sub.onMessage((channel: string, message: string) => {
      if (channel === keys.feedChannel(stationId)) got.push(JSON.parse(message));
    });
    await sub.subscribe(stationId);
    return got;
  }

  it('upserts a row and publishes it on Redis only after the transaction commits, with a per-station sequence', async () => {
    const station = await createStation(server.url);
    const base = await seqOf(station.id);
    const got = await listen(station.id);
    let publishedBeforeCommit = -1;
    await inTransaction(server.svc.db, async (tx) => {
      await upsertFeedRow(tx, server.svc.bus, { stationId: station.id, kind: 'now-playing', entry: 'current', data: { n: 1 } });
      await upsertFeedRow(tx, server.svc.bus, { stationId: station.id, kind: 'now-playing', entry: 'current', data: { n: 2 } });
      await new Promise((r) => setTimeout(r, 50));
      publishedBeforeCommit = got.length;
    });
    expect(publishedBeforeCommit).to.equal(0);
    await eventually(() => got.length === 2);
    expect(got.map((m) => m.seq)).to.deep.equal([base + 1, base + 2]);
    expect(got[1]).to.include({ stationId: station.id, kind: 'now-playing', entry: 'current', deleted: false });
    expect(got[1].data).to.deep.equal({ n: 2 });
    const rows = await server.svc.db('feed_rows').where({ station_id: station.id, kind: 'now-playing' });
    expect(rows).to.have.length(1);
    expect(rows[0].data).to.deep.equal({ n: 2 });
    expect(Number(rows[0].seq)).to.equal(base + 2);
  });

  it('publishes nothing when the transaction rolls back', async () => {
    const station = await createStation(server.url);
    const got = await listen(station.id);
    await inTransaction(server.svc.db, async (tx) => {
      await upsertFeedRow(tx, server.svc.bus, { stationId: station.id, kind: 'content', entry: 'abc', data: {} });
      throw new Error('boom');
    }).catch(() => undefined);
    expect(await server.svc.db('feed_rows').where({ station_id: station.id, kind: 'content' })).to.have.length(0);
    // A later committed write proves the channel works and the rolled-back one never arrived.
    await inTransaction(server.svc.db, (tx) =>
      upsertFeedRow(tx, server.svc.bus, { stationId: station.id, kind: 'content', entry: 'def', data: {} }),
    );
    await eventually(() => got.length === 1);
    expect(got[0].entry).to.equal('def');
  });

  it('deletes leave a tombstone with a new sequence so catch-up sees removals', async () => {
    const station = await createStation(server.url);
    const base = await seqOf(station.id);
    const got = await listen(station.id);
    await inTransaction(server.svc.db, (tx) =>
      upsertFeedRow(tx, server.svc.bus, { stationId: station.id, kind: 'content', entry: 'r1', data: { t: 'x' } }),
    );
    await inTransaction(server.svc.db, (tx) => deleteFeedRow(tx, server.svc.bus, { stationId: station.id, kind: 'content', entry: 'r1' }));
    expect(
      await inTransaction(server.svc.db, (tx) =>
        deleteFeedRow(tx, server.svc.bus, { stationId: station.id, kind: 'content', entry: 'r1' }),
      ),
    ).to.equal(null);
    await eventually(() => got.length === 2);
    expect(got[1]).to.include({ deleted: true, seq: base + 2, data: null });
    const since = await feedRowsSince(server.svc.db, station.id, base + 1);
    expect(since.map((m) => [m.entry, m.deleted, m.seq])).to.deep.equal([['r1', true, base + 2]]);
  });
});
