import { expect } from 'chai';
import { createLogger } from '../../src/lib/logger.ts';
import { loadConfig } from '../../src/config.ts';
import { cursorOf, segmentOf } from '../../src/gateway/cursor.ts';
import { begin, prepare, ready, type Sink } from '../../src/gateway/session.ts';
import { StationFeed } from '../../src/gateway/stationFeed.ts';
import type { FeedStore, StoredRow } from '../../src/gateway/store.ts';

// The start of a connection against a station feed whose store is in memory: the cases a gateway meets
// rarely (a cursor from a node that is ahead, a read that fails) without Postgres.

const at = '2026-11-26T00:00:00.000Z';
const row = (entry: string, seq: number, extra: Partial<StoredRow> = {}): StoredRow => ({
  kind: 'content',
  entry,
  seq,
  deleted: false,
  data: { entry },
  updatedAt: at,
  ...extra,
});

/** A station's rows in memory, with a count of each read. */
function memoryStore(rows: StoredRow[], feedSeq: () => number) {
  const reads = { currentRows: 0, rowsSince: 0, contentSince: 0 };
  let failBodies = false;
  const store = {
    reads,
    failBodies: (fail: boolean) => (failBodies = fail),
    async currentRows(_id: string, bodies: number) {
      reads.currentRows++;
      const live = rows.filter((r) => !r.deleted).sort((a, b) => b.seq - a.seq);
      const withData = new Set(live.slice(0, bodies));
      return {
        feedSeq: feedSeq(),
        history: { epoch: 'e1', prunedSeq: 0 },
        hidden: [],
        rows: rows.map((r) => (r.deleted || withData.has(r) ? r : { ...r, data: undefined })),
      };
    },
    async rowsSince(_id: string, after: number) {
      reads.rowsSince++;
      return { feedSeq: feedSeq(), history: { epoch: 'e1', prunedSeq: 0 }, rows: rows.filter((r) => r.seq > after) };
    },
    async contentSince(_id: string, after: number) {
      reads.contentSince++;
      if (failBodies) throw new Error('Postgres unreachable');
      return rows.filter((r) => !r.deleted && r.seq > after);
    },
    async recentContent() {
      return [];
    },
    async hiddenKinds() {
      return [];
    },
  };
  return store;
}

function recorder(): Sink & { messages: any[] } {
  const messages: any[] = [];
  return { messages, send: (frame) => (messages.push(JSON.parse(String(frame))), true), subscribe: () => {} };
}

const config = loadConfig();
const logger = createLogger(config, 'test');

describe('realtime feed: starting a connection (session)', () => {
  it('a cursor ahead of this gateway (a change another node sent first) catches up once, then resumes', async () => {
    let seq = 3;
    const rows = [row('a', 1), row('b', 2), row('c', 3)];
    const store = memoryStore(rows, () => seq);
    const feed = new StationFeed('st_x', store as unknown as FeedStore, () => {}, logger);
    await feed.load();
    // The change of seq 4 is committed and seen by the client through another node; not yet here.
    rows.push(row('d', 4));
    seq = 4;
    const cursor = cursorOf([segmentOf(feed.key, { epoch: 'e1', seq: 4, mask: 0 })]);
    expect(ready([feed], cursor, true)).to.equal(false);
    await Promise.all([prepare([feed], cursor), prepare([feed], cursor), prepare([feed], cursor)]);
    expect(store.reads.rowsSince).to.be.at.most(2); // shared: not one per client
    const sink = recorder();
    begin(sink, [feed], cursor, true);
    expect(sink.messages.map((m) => m.type)).to.deep.equal(['synced']);
    expect(sink.messages[0].data.states).to.deep.equal({ 'stations.st_x.feed': 'resumed' });
  });

  it('content bodies older than those held are read once for a burst; a read that fails makes the channel a reset, never an error', async () => {
    const rows = Array.from({ length: 60 }, (_, i) => row(`r${i}`, i + 1));
    const store = memoryStore(rows, () => 60);
    const feed = new StationFeed('st_y', store as unknown as FeedStore, () => {}, logger);
    await feed.load();
    const cursor = cursorOf([segmentOf(feed.key, { epoch: 'e1', seq: 2, mask: 0 })]);
    expect(ready([feed], cursor, true)).to.equal(false);
    await Promise.all(Array.from({ length: 20 }, () => prepare([feed], cursor)));
    expect(store.reads.contentSince).to.equal(1);
    const sink = recorder();
    begin(sink, [feed], cursor, true);
    expect(sink.messages.filter((m) => m.type === 'event')).to.have.length(58);
    expect(sink.messages.at(-1).data.states).to.deep.equal({ 'stations.st_y.feed': 'resumed' });

    const cold = new StationFeed('st_y', store as unknown as FeedStore, () => {}, logger);
    await cold.load();
    store.failBodies(true);
    await prepare([cold], cursor);
    const reset = recorder();
    begin(reset, [cold], cursor, true);
    expect(reset.messages[0]).to.deep.equal({ type: 'reset', data: { channel: 'stations.st_y.feed' } });
    expect(reset.messages.at(-1).data.states).to.deep.equal({ 'stations.st_y.feed': 'reset' });
  });

  it('the clients of a burst at one cursor get the same bytes, and the first client after a change gets that change', async () => {
    const rows = [row('a', 1), row('b', 2), row('c', 3)];
    const store = memoryStore(rows, () => 3);
    const feed = new StationFeed('st_z', store as unknown as FeedStore, () => {}, logger);
    await feed.load();
    const cursor = cursorOf([segmentOf(feed.key, { epoch: 'e1', seq: 2, mask: 0 })]);
    const raw = () => {
      const frames: Array<Buffer | string> = [];
      return { frames, send: (frame: Buffer | string) => (frames.push(frame), true), subscribe: () => {} };
    };
    const first = raw();
    const second = raw();
    begin(first, [feed], cursor, true);
    begin(second, [feed], cursor, true);
    expect(second.frames).to.have.length(2); // c, then synced
    second.frames.forEach((frame, i) => expect(frame).to.equal(first.frames[i]));

    feed.receive(row('b', 4, { data: { entry: 'b', changed: true } }));
    const later = recorder();
    begin(later, [feed], cursor, true);
    expect(later.messages.map((m) => m.data.events?.[0] ?? m.type)).to.deep.equal([
      'stations.st_z.feed.rows.content:c.update',
      'stations.st_z.feed.rows.content:b.update',
      'synced',
    ]);
    expect(JSON.parse(later.messages[1].data.payload.data_json).data).to.deep.equal({ entry: 'b', changed: true });
    expect(later.messages[2].data.cursor).to.equal(cursorOf([segmentOf(feed.key, { epoch: 'e1', seq: 4, mask: 0 })]));
  });

  it('without resume asked (a WebSocket without lastEventId) the start is events only; the kept start of one kind is never given to the other', async () => {
    const rows = [row('a', 1), row('b', 2)];
    const store = memoryStore(rows, () => 2);
    const feed = new StationFeed('st_w', store as unknown as FeedStore, () => {}, logger);
    await feed.load();
    const plain = recorder();
    begin(plain, [feed], null, false);
    expect(plain.messages.map((m) => m.type)).to.deep.equal(['event', 'event']);
    expect(plain.messages.every((m) => Array.isArray(m.data.channels) && typeof m.data.cursor === 'string')).to.equal(true);
    // The same channels and (empty) cursor, resume asked: the start kept for the plain client does not serve it.
    const resuming = recorder();
    begin(resuming, [feed], '', true);
    expect(resuming.messages.map((m) => m.type)).to.deep.equal(['event', 'event', 'synced']);
    expect(resuming.messages[2].data).to.have.keys('cursor', 'states');
    expect(resuming.messages[2].data.states).to.deep.equal({ 'stations.st_w.feed': 'fresh' });
    const sse = recorder(); // an SSE stream without Last-Event-ID
    begin(sse, [feed], null, true);
    expect(sse.messages.map((m) => m.type)).to.deep.equal(['event', 'event', 'synced']);
    const again = recorder();
    begin(again, [feed], null, false);
    expect(again.messages.map((m) => m.type)).to.deep.equal(['event', 'event']);
  });
});
