import { expect } from 'chai';
import { queriesDuring, useClockedServer, sharedServer } from '../../support/server.ts';
import { request, type Reply } from '../../support/http.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';
import { putBroadcast, putProgram } from '../schedule/helpers.ts';
import { readKey } from '../../../src/lib/readCache.ts';
import { gql } from '../../graphql/helpers.ts';

// docs/now-playing.md#heard-time-answers-in-the-listeners-time: with `stream={key}` now-playing,
// track-history and current-broadcast answer at heard time `now − latencySeconds`, and the answer changes
// when a change becomes audible.

const T0 = new Date('2026-06-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const STREAMS = [
  { label: 'MP3', url: 'https://stream.example.org/live.mp3', key: 'mp3', latencySeconds: 6 },
  { label: 'HLS', url: 'https://stream.example.org/live.m3u8', key: 'hls', latencySeconds: 30 },
];

describe('listener time: reads with stream={key}', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });
  const fixture = (streamUrls: unknown = STREAMS) => ingestFixture(server.url, { rundownFollowing: false, profile: { streamUrls } });
  const get = (slug: string, token: string, path: string, headers: Record<string, string> = {}) =>
    request(server.url, 'GET', `/api/v1/stations/${slug}/${path}`, { token, headers });
  const song = (title: string, observedAt: number, durationSeconds = 200) => ({ observedAt, artist: 'A', title, durationSeconds });

  it('now-playing: the latest observation played at or before heard time, age and elapsed from heard time, endsAt shifted; body adds stream', async () => {
    const { station, ingestToken, listenerToken } = await fixture();
    await ingest(server.url, station, ingestToken, song('One', T0.getTime() - 60_000));
    await ingest(server.url, station, ingestToken, song('Two', T0.getTime(), 180));

    const bare = await get(station.slug, listenerToken, 'now-playing');
    expect(bare.body.track.title).to.equal('Two');
    expect(bare.body, 'without stream nothing changes').not.to.have.property('stream');

    const mp3 = await get(station.slug, listenerToken, 'now-playing?stream=mp3');
    expect(mp3.status).to.equal(200);
    expect(mp3.body.track.title).to.equal('One');
    expect(mp3.body.elapsedSeconds).to.equal(54);
    expect(mp3.body.endsAt).to.equal(iso(T0.getTime() - 60_000 + 200_000 + 6_000));
    expect(mp3.body.freshness).to.include({ status: 'fresh', ageSeconds: 54, observedAt: iso(T0.getTime() - 60_000) });
    expect(mp3.body.stream).to.deep.equal({ key: 'mp3', latencySeconds: 6 });

    clock.advance(6_000);
    const heard = await get(station.slug, listenerToken, 'now-playing?stream=mp3');
    expect(heard.body.track.title).to.equal('Two');
    expect(heard.body).to.include({ elapsedSeconds: 0, endsAt: iso(T0.getTime() + 180_000 + 6_000) });
    expect((await get(station.slug, listenerToken, 'now-playing?stream=hls')).body.track.title, 'hls hears 30 s behind').to.equal('One');
  });

  it('a stream answer keeps its ETag (304) when a change arrives, and its cached bytes change exactly when the change becomes audible', async () => {
    const { station, ingestToken, listenerToken } = await fixture();
    await ingest(server.url, station, ingestToken, song('One', T0.getTime() - 59_300));
    const first = await get(station.slug, listenerToken, 'now-playing?stream=mp3');
    const etag = first.headers.get('etag') as string;

    // Played 0.5 s from now: heard on mp3 at T0 + 6.5 s.
    await ingest(server.url, station, ingestToken, song('Two', T0.getTime() + 500));
    expect((await get(station.slug, listenerToken, 'now-playing')).body.track.title, 'on-air time has it').to.equal('Two');
    const arrived = await get(station.slug, listenerToken, 'now-playing?stream=mp3', { 'if-none-match': etag });
    expect(arrived.status, 'not audible yet: same answer').to.equal(304);
    expect(arrived.headers.get('etag')).to.equal(etag);

    clock.set(T0.getTime() + 6_000);
    const late = await get(station.slug, listenerToken, 'now-playing?stream=mp3');
    expect(late.body.track.title).to.equal('One');
    // The stored bytes carry the moment: held until T0 + 6.5 s, gone then, with no request in between.
    const key = readKey('getNowPlaying', station.id, '', 'stream=mp3');
    expect(server.svc.reads.peek(key, T0.getTime() + 6_499)?.etag).to.equal(late.headers.get('etag'));
    clock.set(T0.getTime() + 6_499);
    const before = await get(station.slug, listenerToken, 'now-playing?stream=mp3', {
      'if-none-match': late.headers.get('etag') as string,
    });
    expect(before.status).to.equal(304);
    expect(server.svc.reads.peek(key, T0.getTime() + 6_500)).to.equal(undefined);
    clock.set(T0.getTime() + 6_500);
    const audible = await get(station.slug, listenerToken, 'now-playing?stream=mp3', {
      'if-none-match': late.headers.get('etag') as string,
    });
    expect(audible.status).to.equal(200);
    expect(audible.body.track.title).to.equal('Two');
    expect(audible.body.freshness.ageSeconds).to.equal(0);
  });

  it('a repeated stream read (200 and 304) runs no database statement until its moment: no query per request', async () => {
    const { station, ingestToken, listenerToken } = await fixture();
    await ingest(server.url, station, ingestToken, song('One', T0.getTime() - 60_000));
    await ingest(server.url, station, ingestToken, song('Two', T0.getTime() - 2_000));
    for (const path of ['now-playing?stream=mp3', 'track-history?stream=mp3', 'broadcast/current?stream=mp3', 'live?stream=mp3']) {
      const first = await get(station.slug, listenerToken, path);
      expect(first.status, path).to.equal(200);
      const etag = first.headers.get('etag') as string;
      const statements = await queriesDuring(server, async () => {
        for (let i = 0; i < 3; i++) {
          expect((await get(station.slug, listenerToken, path, { 'if-none-match': etag })).status).to.equal(304);
          expect((await get(station.slug, listenerToken, path)).text).to.equal(first.text);
        }
      });
      expect(statements, path).to.equal(0);
    }
    // At the moment "Two" becomes audible (T0 + 4 s) the answer is computed again, once.
    clock.set(T0.getTime() + 4_000);
    let changed = '';
    expect(
      await queriesDuring(server, async () => {
        changed = (await get(station.slug, listenerToken, 'now-playing?stream=mp3')).body.track.title;
      }),
    ).to.be.above(0);
    expect(changed).to.equal('Two');
  });

  it('track-history: items not yet audible on the stream are left out; they appear when they become audible', async () => {
    const { station, ingestToken, listenerToken } = await fixture();
    await ingest(server.url, station, ingestToken, song('One', T0.getTime() - 60_000));
    await ingest(server.url, station, ingestToken, song('Two', T0.getTime() - 3_000));
    const titles = (res: Reply) => (res.body.items as Array<{ title: string }>).map((i) => i.title);
    expect(titles(await get(station.slug, listenerToken, 'track-history'))).to.deep.equal(['Two', 'One']);
    const mp3 = await get(station.slug, listenerToken, 'track-history?stream=mp3');
    expect(titles(mp3)).to.deep.equal(['One']);
    expect(mp3.body.stream).to.deep.equal({ key: 'mp3', latencySeconds: 6 });
    const again = await get(station.slug, listenerToken, 'track-history?stream=mp3', {
      'if-none-match': mp3.headers.get('etag') as string,
    });
    expect(again.status).to.equal(304);
    clock.set(T0.getTime() + 2_999);
    expect(titles(await get(station.slug, listenerToken, 'track-history?stream=mp3'))).to.deep.equal(['One']);
    clock.set(T0.getTime() + 3_000);
    expect(titles(await get(station.slug, listenerToken, 'track-history?stream=mp3'))).to.deep.equal(['Two', 'One']);
    expect(titles(await get(station.slug, listenerToken, 'track-history?stream=hls&limit=1'))).to.deep.equal(['One']);
  });

  it('current-broadcast: the broadcast current at heard time (status at heard time, asOf when computed), changing at its boundary heard on the stream', async () => {
    const { station, ingestToken: _unused, listenerToken } = await fixture();
    const programId = await putProgram(server.url, station.id, { title: 'Show' });
    const fx = { station, token: listenerToken, presenterId: '', programId };
    const first = await putBroadcast(server.url, fx, iso(T0.getTime() - 3_600_000), iso(T0.getTime() + 10_000));
    const second = await putBroadcast(server.url, fx, iso(T0.getTime() + 10_000), iso(T0.getTime() + 3_600_000));
    clock.set(T0.getTime() + 12_000);
    expect((await get(station.slug, listenerToken, 'broadcast/current')).body.broadcast.id).to.equal(second);
    const hls = await get(station.slug, listenerToken, 'broadcast/current?stream=hls');
    expect(hls.body.broadcast).to.include({ id: first, status: 'live' });
    expect(hls.body.asOf).to.equal(iso(T0.getTime() + 12_000));
    expect(hls.body.stream).to.deep.equal({ key: 'hls', latencySeconds: 30 });
    clock.set(T0.getTime() + 39_999);
    const still = await get(station.slug, listenerToken, 'broadcast/current?stream=hls', {
      'if-none-match': hls.headers.get('etag') as string,
    });
    expect(still.status, 'the same answer until the boundary is heard').to.equal(304);
    clock.set(T0.getTime() + 40_000);
    expect((await get(station.slug, listenerToken, 'broadcast/current?stream=hls')).body.broadcast.id).to.equal(second);
  });

  it('an unknown stream key is 400 VALIDATION_ERROR naming stream, its suggestion listing every key of the station, the nearest first; a station without streams says it has none', async () => {
    const { station, listenerToken } = await fixture();
    for (const path of ['now-playing', 'track-history', 'broadcast/current', 'live']) {
      const near = await get(station.slug, listenerToken, `${path}?stream=mp4`);
      expect(near.status, path).to.equal(400);
      expect(near.body.error.code).to.equal('VALIDATION_ERROR');
      const [issue] = near.body.error.issues;
      expect(issue, path).to.include({ path: 'stream', suggestion: 'mp3, hls' });
      expect(issue.message).to.contain('mp3, hls');
      const nearHls = await get(station.slug, listenerToken, `${path}?stream=hl`);
      expect(nearHls.body.error.issues[0], `${path}: the nearest key first`).to.include({ path: 'stream', suggestion: 'hls, mp3' });
      const far = await get(station.slug, listenerToken, `${path}?stream=zzzz`);
      expect(far.body.error.issues[0], `${path}: none near, every key in the station's order`).to.include({
        path: 'stream',
        suggestion: 'mp3, hls',
      });
    }
    const none = await fixture(null);
    for (const path of ['now-playing', 'track-history', 'broadcast/current', 'live']) {
      const res = await get(none.station.slug, none.listenerToken, `${path}?stream=mp3`);
      expect(res.status, path).to.equal(400);
      expect(res.body.error.issues[0].path).to.equal('stream');
      expect(res.body.error.issues[0].message, path).to.contain('lists no streams');
      expect(res.body.error.issues[0]).not.to.have.property('suggestion');
    }
    expect((await get(station.slug, listenerToken, 'now-playing?stream=')).status, 'empty is 400 too').to.equal(400);
  });

  it('GraphQL nowPlaying(stream:) answers as REST does; an unknown stream is VALIDATION_ERROR', async () => {
    const { station, ingestToken, listenerToken } = await fixture();
    await ingest(server.url, station, ingestToken, song('One', T0.getTime() - 60_000));
    await ingest(server.url, station, ingestToken, song('Two', T0.getTime()));
    const res = await gql(
      server.url,
      station.slug,
      listenerToken,
      '{ heard: nowPlaying(stream: "mp3") { track { title } elapsedSeconds endsAt stream { key latencySeconds } } now: nowPlaying { track { title } stream { key } } }',
    );
    expect(res.body.errors).to.equal(undefined);
    const rest = (await get(station.slug, listenerToken, 'now-playing?stream=mp3')).body;
    expect(res.body.data.heard).to.deep.equal({
      track: { title: 'One' },
      elapsedSeconds: rest.elapsedSeconds,
      endsAt: rest.endsAt,
      stream: { key: 'mp3', latencySeconds: 6 },
    });
    expect(res.body.data.now).to.deep.equal({ track: { title: 'Two' }, stream: null });
    const unknown = await gql(server.url, station.slug, listenerToken, '{ nowPlaying(stream: "nope") { track { title } } }');
    expect(unknown.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
    expect(unknown.body.data.nowPlaying).to.equal(null);
  });

  it('GraphQL: an unknown stream of nowPlaying, live, currentBroadcast and trackHistory suggests every key, the nearest first', async () => {
    const { station, listenerToken } = await fixture();
    const fields = [
      'nowPlaying(stream: "hl") { endsAt }',
      'live(stream: "hl") { asOf }',
      'currentBroadcast(stream: "hl") { asOf }',
      'trackHistory(stream: "hl") { nextCursor }',
    ];
    for (const field of fields) {
      const res = await gql(server.url, station.slug, listenerToken, `{ ${field} }`);
      expect(res.body.errors?.[0]?.extensions?.code, field).to.equal('VALIDATION_ERROR');
      expect(res.body.errors[0].extensions.issues[0], field).to.include({ path: 'stream', suggestion: 'hls, mp3' });
    }
    const none = await fixture(null);
    const res = await gql(server.url, none.station.slug, none.listenerToken, '{ nowPlaying(stream: "mp3") { endsAt } }');
    expect(res.body.errors[0].extensions.issues[0].message).to.contain('lists no streams');
    expect(res.body.errors[0].extensions.issues[0]).not.to.have.property('suggestion');
  });
});

describe('listener time on the real clock: a stream answer changes when the change becomes audible', () => {
  it('now-playing and track-history with a 2 s stream: the old answer (304) before the moment, the new one from it', async function () {
    this.timeout(60_000);
    const server = await sharedServer();
    const { station, ingestToken, listenerToken } = await ingestFixture(server.url, {
      rundownFollowing: false,
      profile: { streamUrls: [{ url: 'https://stream.example.org/near.mp3', key: 'near', latencySeconds: 2 }] },
    });
    await ingest(server.url, station, ingestToken, { observedAt: Date.now() - 30_000, artist: 'A', title: 'Old' });
    const get = (path: string, etag?: string) =>
      request(server.url, 'GET', `/api/v1/stations/${station.slug}/${path}`, {
        token: listenerToken,
        headers: etag ? { 'if-none-match': etag } : {},
      });
    const history = await get('track-history?stream=near');
    const historyTag = history.headers.get('etag') as string;
    // Played one second from now: audible on `near` three seconds from now.
    const playedAt = Date.now() + 1_000;
    const audibleAt = playedAt + 2_000;
    const stored = await ingest(server.url, station, ingestToken, { observedAt: playedAt, artist: 'A', title: 'New' });
    expect(stored.status).to.equal(200);
    let sawOld = false;
    let sawNew = false;
    while (Date.now() < audibleAt + 10_000 && !sawNew) {
      const startedAt = Date.now();
      const [playing, page] = await Promise.all([get('now-playing?stream=near'), get('track-history?stream=near', historyTag)]);
      const finishedAt = Date.now();
      const title = playing.body.track.title as string;
      if (finishedAt < audibleAt) {
        expect(title, `${finishedAt - audibleAt} ms before the moment`).to.equal('Old');
        expect(page.status, 'track history keeps its ETag until the moment').to.equal(304);
        sawOld = true;
      }
      if (startedAt >= audibleAt) {
        expect(title, `${startedAt - audibleAt} ms after the moment`).to.equal('New');
        expect(page.status).to.equal(200);
        expect(page.body.items[0].title).to.equal('New');
        sawNew = true;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(sawOld, 'polled before the moment').to.equal(true);
    expect(sawNew, 'the new answer came within the deadline').to.equal(true);
  });
});
