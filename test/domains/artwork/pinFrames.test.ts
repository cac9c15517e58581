import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';
import { closeTestGateways, FeedClient, realtimePath, startTestGateway, STATION_START_ROWS, type EventFrame } from '../../support/feed.ts';
import { ImageServer, png } from '../../support/imageServer.ts';
import { uploaded } from '../media/helpers.ts';

// Operator pins on the realtime feed (docs/now-playing.md#how-an-operator-fixes-wrong-art-in-one-call: the
// operator's word wins, applied at once to reads, history and the feed): a pin's `now-playing` frame reaches a
// connected listener within 2 s of the request, and a track whose artist or title is pinned goes out
// with the pinned art in its very first frame, not the encoder's URL followed by a correction.

const NOW_PLAYING = 'now-playing:current';
const PIN_FRAME_LIMIT_MS = 2000;

const trackOf = (frame: EventFrame): any => JSON.parse(frame.data.payload.data_json).data?.track ?? null;
const nowPlayingFrames = (client: FeedClient) => client.eventsOf(NOW_PLAYING).map(trackOf);

describe('artwork: pins on the realtime feed', function () {
  this.timeout(30_000);
  const images = new ImageServer();
  const { server } = useClockedServer('2026-06-01T12:00:00Z', { workers: true, env: { WEBHOOKS_ALLOW_INSECURE: '1' } });
  before(() => images.start());
  after(async () => {
    await closeTestGateways();
    await images.stop();
  });

  const station = () => ingestFixture(server.url, { rundownFollowing: false });
  const listen = async (stationId: string) => {
    const gateway = await startTestGateway();
    return FeedClient.ready(gateway.url, realtimePath(stationId), STATION_START_ROWS.length);
  };
  const restTrack = async (slug: string, token: string) =>
    (await request(server.url, 'GET', `/api/v1/stations/${slug}/now-playing`, { token })).body.track;

  it('a pin, its replacement and its removal each reach a connected listener within 2 s', async () => {
    const { station: st, ingestToken } = await station();
    const feed = await listen(st.id);
    await ingest(server.url, st, ingestToken, { artist: 'Air', title: 'La Femme d’Argent' });
    await feed.waitEvent((f) => f.data.payload.$id === NOW_PLAYING && trackOf(f)?.title === 'La Femme d’Argent');
    const art = await uploaded(server.url, st.id, await png(41, 700, 700), 'image/png');

    const timed = async (send: () => Promise<{ status: number }>, shows: (track: any) => boolean): Promise<number> => {
      const before = feed.eventsOf(NOW_PLAYING).length;
      const started = performance.now();
      const res = await send();
      expect(res.status).to.be.oneOf([200, 201, 204]);
      await feed.waitEvent(
        (f) => f.data.payload.$id === NOW_PLAYING && feed.eventsOf(NOW_PLAYING).indexOf(f) >= before && shows(trackOf(f)),
        PIN_FRAME_LIMIT_MS + 3000,
      );
      return performance.now() - started;
    };

    const pin = (image: unknown) => () =>
      admin(server.url, 'PUT', `/stations/${st.id}/artwork/pins/air`, { match: { artist: 'Air' }, image });
    const showsPin = (t: any) => t?.artwork?.source === 'operator';
    const steps: Array<[string, () => Promise<{ status: number }>, (track: any) => boolean]> = [
      ['pin', pin({ versionId: art.versionId }), showsPin],
      ['replaced pin (no art)', pin(null), (t) => t !== null && t.artwork === null && !('artworkUrl' in t)],
      ['pin again', pin({ versionId: art.versionId }), showsPin],
      // Removed: the chain again (no ingest URL, no program, no logo): no art.
      ['removed pin', () => admin(server.url, 'DELETE', `/stations/${st.id}/artwork/pins/air`), (t) => t !== null && t.artwork === null],
    ];
    for (const [label, send, shows] of steps) expect(await timed(send, shows), `${label} → frame (ms)`).to.be.at.most(PIN_FRAME_LIMIT_MS);
    feed.close();
  });

  it('a track whose artist or title is pinned goes out with the pin in its first frame (image, or none), and a changed pin holds for the next track', async () => {
    const { station: st, ingestToken, listenerToken } = await station();
    const pinnedArt = await uploaded(server.url, st.id, await png(42, 640, 640), 'image/png');
    const titleArt = await uploaded(server.url, st.id, await png(43, 640, 640), 'image/png');
    const put = (id: string, body: unknown) => admin(server.url, 'PUT', `/stations/${st.id}/artwork/pins/${id}`, body);
    expect((await put('royksopp', { match: { artist: 'Röyksopp' }, image: { versionId: pinnedArt.versionId } })).status).to.equal(201);
    expect((await put('eple', { match: { artist: 'röyksopp', title: 'EPLE' }, image: { versionId: titleArt.versionId } })).status).to.equal(
      201,
    );
    expect((await put('hidden', { match: { artist: 'Hidden Band' }, image: null })).status).to.equal(201);
    const feed = await listen(st.id);
    // The encoder's own art (a valid cover on the local image server) is what a pin overrides.
    const encoderArt = images.serve(`/enc-${randomUUID().slice(0, 8)}`, await png(44, 640, 640));

    const firstFrameOf = async (title: string) => {
      await feed.waitEvent((f) => f.data.payload.$id === NOW_PLAYING && trackOf(f)?.title === title);
      return nowPlayingFrames(feed).find((t) => t?.title === title);
    };

    await ingest(server.url, st, ingestToken, { artist: 'Röyksopp', title: 'Poor Leno', artworkUrl: encoderArt });
    const artistPinned = await firstFrameOf('Poor Leno');
    expect(artistPinned.artwork, JSON.stringify(artistPinned)).to.include({ source: 'operator', width: 640, height: 640 });
    expect(artistPinned.artworkUrl).to.equal(artistPinned.artwork.variants['600']);
    expect((await restTrack(st.slug, listenerToken)).artwork).to.deep.equal(artistPinned.artwork);

    await ingest(server.url, st, ingestToken, { artist: 'Röyksopp', title: 'Eple', artworkUrl: encoderArt });
    const titlePinned = await firstFrameOf('Eple');
    expect(titlePinned.artwork.source).to.equal('operator');
    expect(titlePinned.artwork.url).to.not.equal(artistPinned.artwork.url);

    await ingest(server.url, st, ingestToken, {
      artist: 'Hidden Band',
      title: 'Unseen',
      artworkUrl: 'https://images.example.org/wrong.jpg',
    });
    const none = await firstFrameOf('Unseen');
    expect(none.artwork).to.equal(null);
    expect(none).to.not.have.property('artworkUrl');

    // The pin changed: the very next track of the artist shows the change from its first frame.
    expect((await put('royksopp', { match: { artist: 'Röyksopp' }, image: null })).status).to.equal(200);
    await ingest(server.url, st, ingestToken, { artist: 'Röyksopp', title: 'So Easy', artworkUrl: encoderArt });
    const changed = await firstFrameOf('So Easy');
    expect(changed.artwork).to.equal(null);
    expect(changed).to.not.have.property('artworkUrl');
    feed.close();
  });
});
