import { expect } from 'chai';
import { realtimeUrl, type FeedMessage, type ResumingFeedMessage } from '../../client/src/index.ts';
import { sharedServer } from '../support/server.ts';
import { createStation } from '../support/factories.ts';
import { closeTestGateways, FeedClient, realtimePath, startTestGateway, withCursor, writeRow } from '../support/feed.ts';

// The typed client's realtime part (client/src/index.ts): its URLs are the gateway's, and the message
// union of a plain connection is what such a connection receives.

describe('typed client (client/): realtime feed URLs and messages', () => {
  after(closeTestGateways);

  it('builds the WebSocket and SSE URLs; lastEventId only when asked (empty asks for the full state plus synced)', () => {
    expect(realtimeUrl('wss://rt.example.org/', ['st_a', 'st_b'])).to.equal(
      'wss://rt.example.org/v1/realtime?channels[]=stations.st_a.feed&channels[]=stations.st_b.feed',
    );
    expect(realtimeUrl('ws://rt', ['st_a'], { lastEventId: '' })).to.equal(`ws://rt${withCursor(realtimePath('st_a'))}`);
    expect(realtimeUrl('ws://rt', ['st_a'], { lastEventId: 'c1.x~y' })).to.equal(`ws://rt${withCursor(realtimePath('st_a'), 'c1.x~y')}`);
    expect(realtimeUrl('wss://rt', ['st_a'], { transport: 'sse' })).to.equal('https://rt/v1/realtime/sse?channels[]=stations.st_a.feed');
  });

  it('a connection without lastEventId receives FeedMessage (event, error) only; with lastEventId= a synced whose states are all fresh', async () => {
    const server = await sharedServer();
    const gateway = await startTestGateway();
    const station = await createStation(server.url);
    // The state: the station's schedule, on-air and now-playing rows (there from its creation).
    const plain = await FeedClient.ready(realtimeUrl(gateway.url, [station.id]), '', 3);
    const resuming = await FeedClient.connect(realtimeUrl(gateway.url, [station.id], { lastEventId: '' }), '');
    const synced = (await resuming.waitSynced()) as ResumingFeedMessage;
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'T' } });
    await plain.waitEvent((f) => f.data.payload.kind === 'now-playing' && f.data.events[0].endsWith('.update'));
    const kinds = (plain.messages as FeedMessage[]).map((m) => m.type);
    expect(kinds).to.deep.equal(['event', 'event', 'event', 'event']);
    expect(synced.type === 'synced' && synced.data.states).to.deep.equal({ [`stations.${station.id}.feed`]: 'fresh' });
    plain.close();
    resuming.close();
  });
});
