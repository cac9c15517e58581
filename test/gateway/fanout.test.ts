import { expect } from 'chai';
import { Fanout, type StreamOut } from '../../src/gateway/fanout.ts';
import type { StationFeed } from '../../src/gateway/stationFeed.ts';

// The fan-out's SSE side without sockets: one write per stream and turn, and a stream that joined
// during the turn (its state already has the change) never gets that change again.

const feedOf = (stationId: string) => ({ stationId, segment: () => `k${stationId}~e~1~0` }) as unknown as StationFeed;
const change = (n: number) => ({
  rowId: `content:r${n}`,
  action: 'update' as const,
  updatedAt: '2026-11-26T00:00:00.000Z',
  payload: '{}',
  seq: n,
});

class Recorder implements StreamOut {
  joinedAt = 0;
  readonly writes: string[] = [];
  write(bytes: Buffer): void {
    this.writes.push(bytes.toString());
  }
}

describe('realtime feed: SSE fan-out', () => {
  it("writes a turn's messages to each stream at once, each with its id: cursor; a stream that joined during the turn gets only later ones", async () => {
    const published: string[] = [];
    let counted = 0;
    const fanout = new Fanout(
      (id) => feedOf(id),
      (topic) => published.push(topic),
      (frames) => (counted += frames),
    );
    const set = fanout.join(['st_a']);
    const early = new Recorder();
    fanout.subscribeStream(set, early);
    fanout.change('st_a', change(1));
    fanout.change('st_a', change(2));
    const late = new Recorder(); // its state, written now, has changes 1 and 2
    fanout.subscribeStream(set, late);
    fanout.change('st_a', change(3));
    await new Promise((resolve) => setImmediate(resolve));
    expect(published).to.deep.equal(['stations.st_a.feed', 'stations.st_a.feed', 'stations.st_a.feed']);
    expect(early.writes).to.have.length(1);
    expect(early.writes[0].match(/^id: /gm)).to.have.length(3);
    expect(early.writes[0]).to.match(/^id: c1\.kst_a~e~1~0\ndata: \{"type":"event"/);
    expect(late.writes).to.have.length(1);
    expect(late.writes[0].match(/^data: /gm)).to.have.length(1);
    expect(late.writes[0]).to.include('content:r3');
    expect(counted).to.equal(4);
  });

  it('connections with the same channels share one set, in any order; a set left by everyone is gone, and the next joiner starts a live one', () => {
    const published: string[] = [];
    const fanout = new Fanout(
      (id) => feedOf(id),
      (topic) => published.push(topic),
      () => {},
    );
    const list = Object.freeze(['st_b', 'st_a']);
    const first = fanout.join(list);
    expect(fanout.join(list)).to.equal(first);
    expect(fanout.join(['st_a', 'st_b'])).to.equal(first);
    expect(first.topic).to.equal('set:st_a,st_b');
    for (let i = 0; i < 3; i++) fanout.leave(first);
    fanout.change('st_a', change(1));
    expect(published).to.deep.equal([]);
    const next = fanout.join(list);
    expect(next).to.not.equal(first);
    fanout.change('st_a', change(2));
    expect(published).to.deep.equal(['set:st_a,st_b']);
  });
});
