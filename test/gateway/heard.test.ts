import { expect } from 'chai';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { HeardHistory, MAX_LATENCY_MS, type HeardVersion } from '../../src/gateway/heard.ts';
import { DelayedView, HeardViews } from '../../src/gateway/delay.ts';
import { StationFeed, type FeedChange } from '../../src/gateway/stationFeed.ts';
import type { FeedStore, StoredRow } from '../../src/gateway/store.ts';
import { parseCursor, segmentOf } from '../../src/gateway/cursor.ts';
import { sharedServer } from '../support/server.ts';
import { createStation } from '../support/factories.ts';
import { writeRowAt } from '../support/listenerTime.ts';
import { pruneRowVersions } from '../../src/feed/rows.ts';

// Listener time, the parts below the wire: the history of the delayed rows (what is current at a heard
// time, and the memory bound: at most ten minutes of changes), one delayed view per (station, latency),
// the cursor's heard time, and the versions Postgres keeps for a gateway that has just started.

const version = (seq: number, moment: number, title = `t${seq}`): HeardVersion => ({
  rowId: 'now-playing:current',
  seq,
  moment,
  updatedAt: new Date(moment).toISOString(),
  payload: JSON.stringify({ title }),
  deleted: false,
});

const config = loadConfig();
const logger = createLogger(config, 'test');

describe('realtime feed: listener time, the history of delayed rows', () => {
  it('answers the version current at a heard time: the latest play time at or before it (ties: the later write), only among versions up to a seq', () => {
    const history = new HeardHistory(() => 1_000_000);
    history.add(version(1, 100_000));
    history.add(version(3, 300_000));
    history.add(version(4, 200_000)); // a late report of an older track: never replaces the newer one
    history.add(version(5, 300_000)); // the same observation rewritten (artwork found): replaces it
    expect(history.at('now-playing:current', 150_000)).to.include({ seq: 1 });
    expect(history.at('now-playing:current', 250_000)).to.include({ seq: 4 });
    expect(history.at('now-playing:current', 400_000)).to.include({ seq: 5 });
    expect(history.at('now-playing:current', 400_000, 3)).to.include({ seq: 3 });
    expect(history.at('now-playing:current', 50_000), 'before the oldest version kept').to.equal('unknown');
    expect(history.at('on-air:current', 400_000), 'a row it never had').to.equal(null);
    expect(history.add(version(3, 300_000)), 'a version it has').to.equal(false);
    expect(history.nextMoment(250_000)).to.equal(300_000);
    expect(history.nextMoment(300_000)).to.equal(null);
  });

  it('keeps at most ten minutes of changes: older versions are dropped, except the one current when the kept ones begin (injected clock)', () => {
    let now = Date.parse('2026-11-27T10:00:00Z');
    const history = new HeardHistory(() => now);
    const start = now;
    // One change a minute for twenty minutes.
    for (let minute = 0; minute < 20; minute++) {
      now = start + minute * 60_000;
      history.add(version(minute + 1, now));
    }
    now += 1000;
    history.prune();
    const horizon = now - MAX_LATENCY_MS;
    expect(history.size).to.equal(11); // the ten within the last ten minutes and the one current at the horizon
    expect(history.at('now-playing:current', horizon)).to.include({ seq: 10 });
    expect(history.at('now-playing:current', horizon - 60_001), 'older than the history: not known any more').to.equal('unknown');
    // An hour more of changes, one every 10 s: still bounded by ten minutes' worth.
    for (let i = 0; i < 360; i++) {
      now += 10_000;
      history.add(version(100 + i, now));
    }
    expect(history.size).to.be.at.most(MAX_LATENCY_MS / 10_000 + 2);
  });

  it('a cursor carries the heard time of a delayed connection, and a live cursor none', () => {
    const delayed = parseCursor(`c1.${segmentOf('abcdefgh', { epoch: 'e1', seq: 42, mask: 0, heard: 1_764_000_000_123 })}`);
    expect(delayed?.get('abcdefgh')).to.deep.equal({ epoch: 'e1', seq: 42, mask: 0, heard: 1_764_000_000_123 });
    const live = parseCursor(`c1.${segmentOf('abcdefgh', { epoch: 'e1', seq: 42, mask: 0 })}`);
    expect(live?.get('abcdefgh')).to.deep.equal({ epoch: 'e1', seq: 42, mask: 0 });
  });

  it('connections of the same latency share one delayed view (one timer), another latency has its own; the view goes with its last connection', async () => {
    const at = new Date(Date.now() - 60_000).toISOString();
    const rows: StoredRow[] = [
      { kind: 'now-playing', entry: 'current', seq: 1, deleted: false, data: { track: null, freshness: {} }, updatedAt: at },
    ];
    let historyReads = 0;
    const store = {
      async currentRows() {
        return { feedSeq: 1, history: { epoch: 'e1', prunedSeq: 0 }, hidden: [], rows };
      },
      async heardVersions() {
        historyReads++;
        return rows;
      },
    };
    const feed = new StationFeed('st_h', store as unknown as FeedStore, () => {}, logger);
    await feed.load();
    const released: Array<[number, FeedChange]> = [];
    const views = new HeardViews(feed, store as unknown as FeedStore, (latency, change) => released.push([latency, change]), logger);
    const [a, b, c] = await Promise.all([views.acquire(6000), views.acquire(6000), views.acquire(30_000)]);
    expect(a).to.equal(b);
    expect(a).to.not.equal(c);
    expect(historyReads, 'the station’s history is read once').to.equal(1);
    // A new track now: released by each view when audible to it, not before.
    feed.receive({
      kind: 'now-playing',
      entry: 'current',
      seq: 2,
      deleted: false,
      data: { track: null, freshness: {} },
      updatedAt: new Date().toISOString(),
    });
    expect(released).to.deep.equal([]);
    views.release(6000);
    expect(views.view(6000)).to.equal(a);
    views.release(6000);
    expect(views.view(6000), 'gone with its last connection').to.equal(undefined);
    views.close();
  });
});

describe('realtime feed: listener time, a delayed view', () => {
  it('a late timer or a burst still sends every change that became audible, in the order heard, and the cursor names the heard moment of the last one', async () => {
    const t = Date.parse('2026-11-27T10:00:00Z');
    const np = (seq: number, moment: number): StoredRow => ({
      kind: 'now-playing',
      entry: 'current',
      seq,
      deleted: false,
      data: { track: { title: `t${seq}` }, freshness: { observedAt: new Date(moment).toISOString() } },
      updatedAt: new Date(moment).toISOString(),
    });
    const store = {
      async currentRows() {
        return { feedSeq: 1, history: { epoch: 'e1', prunedSeq: 0 }, hidden: [], rows: [np(1, t - 60_000)] };
      },
    };
    const feed = new StationFeed('st_v', store as unknown as FeedStore, () => {}, logger);
    await feed.load();
    let now = t;
    const released: FeedChange[] = [];
    const view = new DelayedView(
      feed,
      5000,
      (change) => released.push(change),
      () => now,
    );
    feed.receive(np(2, t + 1000));
    feed.receive(np(3, t + 2000));
    view.advance();
    expect(released, 'nothing audible yet').to.deep.equal([]);
    now = t + 8000; // the timer of t + 6000 fires 2 s late
    view.advance();
    expect(released.map((c) => [c.seq, c.action])).to.deep.equal([
      [2, 'update'],
      [3, 'update'],
    ]);
    const cursor = parseCursor(`c1.${view.segment()}`);
    expect([...cursor!.values()][0]).to.include({ seq: 3, heard: t + 2000 });
    view.close();
  });
});

describe('realtime feed: listener time, versions in Postgres', () => {
  it('every version of the now-playing and on-air rows is kept (a trigger on feed_rows) and pruned after an hour, except the newest of each row', async () => {
    const server = await sharedServer();
    const { svc } = server;
    const station = await createStation(server.url);
    const now = Date.now();
    for (const minutes of [130, 90, 70, 5]) await writeRowAt(svc, station.id, 'on-air', { minutes }, new Date(now - minutes * 60_000));
    await writeRowAt(svc, station.id, 'schedule', { days: 1 }, new Date(now));
    // The station's creation wrote its empty on-air (null) and now-playing rows: versions too, left out here.
    const versions = () => svc.db('feed_row_versions').where({ station_id: station.id }).orderBy('seq').select('kind', 'data');
    const kept = async () => (await versions()).filter((v) => v.kind === 'on-air' && v.data !== null);
    expect((await versions()).map((v) => v.kind)).not.to.include('schedule'); // schedule is not delayed: no versions
    expect((await kept()).map((v) => v.data.minutes)).to.deep.equal([130, 90, 70, 5]);
    await pruneRowVersions(svc.db, new Date(now));
    expect((await kept()).map((v) => v.data.minutes)).to.deep.equal([70, 5]);
  });
});
