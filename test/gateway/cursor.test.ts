import { expect } from 'chai';
import { splitCursor } from '../../src/gateway/admission.ts';
import { channelKey, cursorOf, MAX_CURSOR_LENGTH, parseCursor, segmentOf } from '../../src/gateway/cursor.ts';

describe('realtime feed: the cursor', () => {
  it('is 1 to 400 characters of [A-Za-z0-9._~-] naming every channel, even 10 channels of 80-character station ids', () => {
    const channels = Array.from({ length: 10 }, (_, i) => `stations.${String(i).padEnd(80, 'x')}.feed`);
    const cursor = cursorOf(channels.map((channel) => segmentOf(channelKey(channel), { epoch: 'a1b2c3d4', seq: 2 ** 52, mask: 15 })));
    expect(cursor.length).to.be.at.most(MAX_CURSOR_LENGTH);
    expect(cursor).to.match(/^[A-Za-z0-9._~-]{1,400}$/);
    const positions = parseCursor(cursor)!;
    expect([...positions.keys()]).to.deep.equal(channels.map(channelKey));
    expect(positions.get(channelKey(channels[3]))).to.deep.equal({ epoch: 'a1b2c3d4', seq: 2 ** 52, mask: 15 });
    expect(cursorOf([])).to.equal('c1'); // no channel positioned yet
    expect(parseCursor('c1')!.size).to.equal(0);
  });

  it('does not parse anything it did not write', () => {
    for (const text of [
      '',
      'c2',
      'c1.',
      'c1.abc',
      'c1.AAAAAAAA~e~1',
      'x'.repeat(401),
      'c1.AAAAAAAA~e~1~0.AAAAAAAA~e~2~0',
      'c1 AAAAAAAA~e~1~0',
    ])
      expect(parseCursor(text), text).to.equal(null);
  });

  it('lastEventId is cut out of the query (percent-decoded; the first of repeated ones counts); the channels stay', () => {
    expect(splitCursor('channels[]=a')).to.deep.equal({ query: 'channels[]=a', lastEventId: null });
    expect(splitCursor('lastEventId=c1.x&channels[]=a')).to.deep.equal({ query: 'channels[]=a', lastEventId: 'c1.x' });
    expect(splitCursor('channels[]=a&lastEventId=c1%7Ex&channels[]=b')).to.deep.equal({
      query: 'channels[]=a&channels[]=b',
      lastEventId: 'c1~x',
    });
    expect(splitCursor('channels[]=a&lastEventId=1&lastEventId=2')).to.deep.equal({ query: 'channels[]=a', lastEventId: '1' });
    expect(splitCursor('channels[]=a&lastEventId=%E0%A4%A')).to.deep.equal({ query: 'channels[]=a', lastEventId: '%E0%A4%A' });
    expect(splitCursor('lastEventId=c1+x&channels[]=a')).to.deep.equal({ query: 'channels[]=a', lastEventId: 'c1 x' });
  });
});
