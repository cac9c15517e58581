import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { refreshOnAir } from '../../../src/domains/schedule/onair.ts';
import { runScheduleTick } from '../../../src/domains/schedule/timers.ts';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { createToken } from '../../support/factories.ts';
import { ingest } from '../../support/ingest.ts';
import { gql } from '../../graphql/helpers.ts';
import { putBroadcast, putRundown, scheduleFixture } from '../schedule/helpers.ts';

// docs/now-playing.md#up-next, docs/now-playing.md#the-live-answer-get-livestreamkey: the `upNext` setting,
// up next on the on-air feed row and in `GET …/live`, and `live` computed at one instant (heard time with
// `stream`).

const STREAMS = [{ url: 'https://stream.example.org/live.mp3', key: 'mp3', latencySeconds: 6 }];

describe('up next and GET …/live', () => {
  const { clock, server } = useClockedServer('2026-06-10T09:57:00Z', { reset: true });

  const onAirRow = async (stationId: string) =>
    (await server.svc.db('feed_rows').where({ station_id: stationId, kind: 'on-air', entry: 'current' }).first('data'))?.data;

  /** A live broadcast 09:00–11:00 whose rundown has ads and a jingle between the tracks. */
  async function liveShow(overrides: Record<string, unknown> = {}) {
    const fx = await scheduleFixture(server.url, { rundownFollowing: false, profile: { streamUrls: STREAMS }, ...overrides });
    const broadcastId = await putBroadcast(server.url, fx, '2026-06-10T09:00:00Z', '2026-06-10T11:00:00Z', { title: 'Live Hour' });
    const res = await putRundown(server.url, fx.station.id, broadcastId, [
      { kind: 'track', artist: 'Air', title: 'A1', plannedStartsAt: '2026-06-10T09:55:00Z', durationSeconds: 300 }, // 09:55–10:00
      { kind: 'ad', title: 'Ad', durationSeconds: 30 }, // 10:00:00–10:00:30
      { kind: 'track', artist: 'Björk', title: 'B', durationSeconds: 200 }, // 10:00:30–10:03:50
      { kind: 'jingle', title: 'Jingle', durationSeconds: 10 }, // 10:03:50–10:04:00
      { kind: 'talk', title: 'Talk', durationSeconds: 60 }, // 10:04–10:05
      { kind: 'track', artist: 'Can', title: 'C', durationSeconds: 120 }, // 10:05–10:07
    ]);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const items = res.body.items as Array<{ id: string; title: string; kind: string; plannedStartsAt: string }>;
    const { token: ingestToken } = await createToken(server.url, fx.station.id, ['ingest:write']);
    return { fx, broadcastId, items, ingestToken };
  }
  const live = (slug: string, token: string, query = '', headers: Record<string, string> = {}) =>
    request(server.url, 'GET', `/api/v1/stations/${slug}/live${query}`, { token, headers });
  const titles = (upNext: Array<{ title: string }> | null) => (upNext === null ? null : upNext.map((i) => i.title));

  it('upNext is off by default: the admin view says so, live has upNext null, the on-air row has no upNext key', async () => {
    const { fx } = await liveShow();
    expect((await admin(server.url, 'GET', `/stations/${fx.station.id}`)).body.upNext).to.deep.equal({ enabled: false, count: 1 });
    const res = await live(fx.station.slug, fx.token);
    expect(res.status).to.equal(200);
    expect(res.body.upNext).to.equal(null);
    const row = await onAirRow(fx.station.id);
    expect(row.position.title).to.equal('A1');
    expect(row).not.to.have.property('upNext');
  });

  it('switched on: the next `count` items after the position, ads and jingles skipped, on the on-air row (rebuilt on the change) and in live', async () => {
    const { fx, items } = await liveShow();
    const on = await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { upNext: { enabled: true, count: 2 } });
    expect(on.body.upNext).to.deep.equal({ enabled: true, count: 2 });
    const row = await onAirRow(fx.station.id);
    expect(row.upNext).to.deep.equal([
      {
        itemId: items[2].id,
        kind: 'track',
        artist: 'Björk',
        title: 'B',
        durationSeconds: 200,
        plannedStartsAt: '2026-06-10T10:00:30.000Z',
      },
      { itemId: items[4].id, kind: 'talk', artist: null, title: 'Talk', durationSeconds: 60, plannedStartsAt: '2026-06-10T10:04:00.000Z' },
    ]);
    expect((await live(fx.station.slug, fx.token)).body.upNext).to.deep.equal(row.upNext);
    // Count alone merges into what is stored.
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { upNext: { count: 1 } });
    expect(titles((await onAirRow(fx.station.id)).upNext)).to.deep.equal(['B']);
    expect(titles((await live(fx.station.slug, fx.token)).body.upNext)).to.deep.equal(['B']);
    // Moving with the planned position; [] after the last item.
    clock.set('2026-06-10T10:05:00Z');
    await runScheduleTick(server.svc, fx.station.id, clock.now());
    expect((await onAirRow(fx.station.id)).upNext).to.deep.equal([]);
    expect((await live(fx.station.slug, fx.token)).body.upNext).to.deep.equal([]);
    // Off again: the key leaves the row.
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { upNext: { enabled: false } });
    expect(await onAirRow(fx.station.id)).not.to.have.property('upNext');
    expect((await live(fx.station.slug, fx.token)).body.upNext).to.equal(null);
  });

  it('follows the matched item when there is one; [] when nothing is on air', async () => {
    const { fx, broadcastId, items } = await liveShow({ upNext: { enabled: true, count: 3 } });
    await server.svc.db('observations').insert({
      id: randomUUID(),
      station_id: fx.station.id,
      fingerprint: randomUUID(),
      artist: 'x',
      title: 'Talk',
      is_playing: true,
      observed_at: new Date('2026-06-10T09:58:00Z'),
      received_at: new Date('2026-06-10T09:58:00Z'),
      sort_at: new Date('2026-06-10T09:58:00Z'),
      outcome: 'matched',
      accepted: true,
      broadcast_id: broadcastId,
      rundown_item_id: items[4].id,
    });
    clock.set('2026-06-10T09:58:00Z');
    await refreshOnAir(server.svc, fx.station.id);
    expect((await onAirRow(fx.station.id)).position.title).to.equal('Talk');
    expect(titles((await onAirRow(fx.station.id)).upNext)).to.deep.equal(['C']);
    expect(titles((await live(fx.station.slug, fx.token)).body.upNext)).to.deep.equal(['C']);
    // On a stream 6 s behind, the match is not audible until 09:58:06: up next follows the plan till then.
    clock.set('2026-06-10T09:58:05.999Z');
    expect(titles((await live(fx.station.slug, fx.token, '?stream=mp3')).body.upNext)).to.deep.equal(['B', 'Talk', 'C']);
    clock.set('2026-06-10T09:58:06Z');
    expect(titles((await live(fx.station.slug, fx.token, '?stream=mp3')).body.upNext)).to.deep.equal(['C']);

    clock.set('2026-06-10T11:30:00Z');
    const off = await live(fx.station.slug, fx.token);
    expect(off.body.broadcast).to.equal(null);
    expect(off.body.upNext, 'on, but nothing on air').to.deep.equal([]);
  });

  it('upNext.count outside 1–5 or an unknown key is 400 naming the field', async () => {
    const { fx } = await liveShow();
    for (const [upNext, path] of [
      [{ count: 0 }, 'upNext.count'],
      [{ count: 6 }, 'upNext.count'],
      [{ enabled: 'yes' }, 'upNext.enabled'],
    ] as const) {
      const res = await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { upNext });
      expect(res.status).to.equal(400);
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).to.include(path);
    }
  });

  it('live: every part at one instant — with stream, at heard time — agreeing with the now-playing and current-broadcast reads; ETag/304', async () => {
    const { fx, broadcastId, ingestToken } = await liveShow({ upNext: { enabled: true, count: 2 } });
    clock.set('2026-06-10T10:00:33Z');
    await ingest(server.url, fx.station, ingestToken, {
      observedAt: Date.parse('2026-06-10T09:55:00Z'),
      artist: 'Air',
      title: 'A1',
      durationSeconds: 300,
    });
    await ingest(server.url, fx.station, ingestToken, {
      observedAt: Date.parse('2026-06-10T10:00:30Z'),
      artist: 'Björk',
      title: 'B',
      durationSeconds: 200,
    });

    const bare = await live(fx.station.slug, fx.token);
    expect(bare.body).to.include({
      contractVersion: 1,
      stationId: fx.station.id,
      timezone: 'Europe/Berlin',
      asOf: '2026-06-10T10:00:33.000Z',
      stream: null,
    });
    expect(bare.body.nowPlaying.track.title).to.equal('B');
    expect(titles(bare.body.upNext), 'position B (10:00:30)').to.deep.equal(['Talk', 'C']);
    const np = (await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/now-playing`, { token: fx.token })).body;
    const { contractVersion: _v, stationId: _s, timezone: _t, ...npParts } = np;
    expect(bare.body.nowPlaying).to.deep.equal(npParts);
    const current = (await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/broadcast/current`, { token: fx.token })).body;
    expect(bare.body.broadcast).to.deep.equal(current.broadcast);
    expect(bare.body.broadcast.id).to.equal(broadcastId);

    // mp3 hears 10:00:27: the ad is on (position), A1 still playing.
    const heard = await live(fx.station.slug, fx.token, '?stream=mp3');
    expect(heard.body.stream).to.deep.equal({ key: 'mp3', latencySeconds: 6 });
    expect(heard.body.asOf).to.equal('2026-06-10T10:00:33.000Z');
    expect(heard.body.nowPlaying.track.title).to.equal('A1');
    expect(heard.body.nowPlaying.elapsedSeconds).to.equal(300);
    expect(titles(heard.body.upNext)).to.deep.equal(['B', 'Talk']);
    const npHeard = (await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/now-playing?stream=mp3`, { token: fx.token }))
      .body;
    expect(heard.body.nowPlaying).to.deep.equal({
      track: npHeard.track,
      elapsedSeconds: npHeard.elapsedSeconds,
      endsAt: npHeard.endsAt,
      freshness: npHeard.freshness,
    });
    const cbHeard = (
      await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/broadcast/current?stream=mp3`, { token: fx.token })
    ).body;
    expect(heard.body.broadcast).to.deep.equal(cbHeard.broadcast);

    const again = await live(fx.station.slug, fx.token, '?stream=mp3', { 'if-none-match': heard.headers.get('etag') as string });
    expect(again.status).to.equal(304);
    // B becomes audible on mp3 at 10:00:36: the answer changes then.
    clock.set('2026-06-10T10:00:36Z');
    const later = await live(fx.station.slug, fx.token, '?stream=mp3', { 'if-none-match': heard.headers.get('etag') as string });
    expect(later.status).to.equal(200);
    expect(later.body.nowPlaying.track.title).to.equal('B');
    expect(titles(later.body.upNext), 'heard 10:00:30: B is on').to.deep.equal(['Talk', 'C']);
  });

  it('GraphQL live(stream:) is the REST answer; live is gated like every listener read (401, MODULE_DISABLED)', async () => {
    const { fx } = await liveShow({ upNext: { enabled: true, count: 1 } });
    const rest = (await live(fx.station.slug, fx.token, '?stream=mp3')).body;
    const res = await gql(
      server.url,
      fx.station.slug,
      fx.token,
      '{ live(stream: "mp3") { contractVersion stationId asOf stream { key latencySeconds } broadcast { id status } nowPlaying { track { title } freshness { status } } upNext { itemId title plannedStartsAt } } }',
    );
    expect(res.body.errors).to.equal(undefined);
    expect(res.body.data.live).to.deep.equal({
      contractVersion: 1,
      stationId: fx.station.id,
      asOf: rest.asOf,
      stream: rest.stream,
      broadcast: { id: rest.broadcast.id, status: rest.broadcast.status },
      nowPlaying: { track: null, freshness: { status: 'empty' } },
      upNext: rest.upNext.map((i: { itemId: string; title: string; plannedStartsAt: string }) => ({
        itemId: i.itemId,
        title: i.title,
        plannedStartsAt: i.plannedStartsAt,
      })),
    });
    const unknown = await gql(server.url, fx.station.slug, fx.token, '{ live(stream: "aac") { asOf } }');
    expect(unknown.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');

    expect((await live(fx.station.slug, '')).status).to.equal(401);
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { modules: { nowPlaying: false } });
    const disabled = await live(fx.station.slug, fx.token);
    expect(disabled.status).to.equal(404);
    expect(disabled.body.error.code).to.equal('MODULE_DISABLED');
  });
});
