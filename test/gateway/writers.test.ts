import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sharedServer, type TestServer } from '../support/server.ts';
import { admin, request } from '../support/http.ts';
import { createToken } from '../support/factories.ts';
import { closeTestGateways, FeedClient, realtimePath, startTestGateway, type EventFrame } from '../support/feed.ts';
import { putBroadcast, scheduleFixture } from '../domains/schedule/helpers.ts';
import { published, putType } from '../domains/content/helpers.ts';
import { ingest } from '../support/ingest.ts';

// The feed end to end: the real writers (ingest, publish, unpublish, schedule admin) through Redis to a
// real gateway and a real WebSocket client.

const dataOf = (frame: EventFrame) =>
  JSON.parse(frame.data.payload.data_json) as { protocol: string; stationId: string; type: string; data: any };

describe('realtime feed: events from the real writers', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });
  after(() => closeTestGateways());

  it('delivers now-playing after ingest, content on publish, .delete on unpublish, and schedule on a broadcast change', async () => {
    const gateway = await startTestGateway();
    const fx = await scheduleFixture(server.url, { rundownFollowing: false });
    const now = Date.now();
    await putBroadcast(server.url, fx, new Date(now - 3600_000).toISOString(), new Date(now + 3600_000).toISOString());
    const client = await FeedClient.ready(gateway.url, realtimePath(fx.station.id), 1);
    const channel = `stations.${fx.station.id}.feed`;

    const { token: ingestToken } = await createToken(server.url, fx.station.id, ['ingest:write']);
    const res = await ingest(server.url, fx.station, ingestToken, {
      eventId: randomUUID(),
      artist: 'Lumen Fields',
      title: 'Northern Lights',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const nowPlaying = await client.waitEvent(
      (f) => f.data.payload.kind === 'now-playing' && dataOf(f).data.track?.title === 'Northern Lights',
    );
    expect(nowPlaying.data.channels).to.deep.equal([channel]);
    expect(dataOf(nowPlaying)).to.include({ protocol: 'waveline.public.v1', stationId: fx.station.id, type: 'now-playing' });
    const rest = await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/now-playing`, { token: fx.token });
    expect(dataOf(nowPlaying).data.track).to.deep.equal(rest.body.track);

    expect((await putType(server.url, fx.station.id, 'news')).status).to.equal(200);
    const recordId = await published(server.url, fx.station.id, 'news', { title: 'Breaking' });
    const content = await client.waitEvent((f) => f.data.payload.kind === 'content' && f.data.payload.entry === recordId);
    expect(content.data.events[0]).to.match(new RegExp(`^${channel.replace(/\./g, '\\.')}\\.rows\\..+\\.create$`));
    const record = await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/content/${recordId}`, { token: fx.token });
    expect(dataOf(content).data).to.deep.equal(record.body);

    expect((await admin(server.url, 'POST', `/stations/${fx.station.id}/records/${recordId}/unpublish`, {})).status).to.equal(200);
    const removed = await client.waitEvent((f) => f.data.payload.entry === recordId && f.data.events[0].endsWith('.delete'));
    expect(removed.data.events).to.include(`${channel}.rows.*.delete`);

    const later = await putBroadcast(server.url, fx, new Date(now + 86400_000).toISOString(), new Date(now + 90000_000).toISOString());
    const schedule = await client.waitEvent(
      (f) => f.data.payload.kind === 'schedule' && dataOf(f).data.broadcasts.some((b: { id: string }) => b.id === later),
    );
    expect(schedule.data.events[0]).to.match(/\.update$/);
    expect(dataOf(schedule).data).to.include.keys('contractVersion', 'timezone', 'broadcasts', 'truncated');
    client.close();
  });
});
