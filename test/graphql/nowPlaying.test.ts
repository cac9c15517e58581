import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { admin, request } from '../support/http.ts';
import { ingest, ingestFixture } from '../support/ingest.ts';
import { gql } from './helpers.ts';

const TRACK =
  'artist title album durationSeconds artworkUrl artwork { url source width height variants { _300 _600 _1200 } } isPlaying observedAt receivedAt';

describe('GraphQL: nowPlaying and trackHistory', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('nowPlaying has the REST shape; trackHistory pages like REST', async () => {
    const fx = await ingestFixture(server.url, { rundownFollowing: false });
    for (let i = 0; i < 3; i++) {
      const res = await ingest(server.url, fx.station, fx.ingestToken, {
        eventId: `e${i}`,
        artist: 'Artist',
        title: `Song ${i}`,
        durationSeconds: 200,
        observedAt: Date.now() - (3 - i) * 1000,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    const q = `query($c: String) { nowPlaying { contractVersion stationId timezone track { ${TRACK} } elapsedSeconds endsAt freshness { status thresholdSeconds observedAt receivedAt } }
      trackHistory(limit: 2, cursor: $c) { contractVersion nextCursor items { id ${TRACK} } } }`;
    const first = await gql(server.url, fx.station.slug, fx.listenerToken, q);
    expect(first.body.errors, JSON.stringify(first.body.errors)).to.equal(undefined);
    const rest = (await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/now-playing`, { token: fx.listenerToken })).body;
    expect(first.body.data.nowPlaying.track).to.deep.equal({ ...rest.track, artworkUrl: null });
    expect(first.body.data.nowPlaying.freshness.status).to.equal('fresh');
    expect(first.body.data.trackHistory.items.map((i: { title: string }) => i.title)).to.deep.equal(['Song 2', 'Song 1']);
    const second = await gql(server.url, fx.station.slug, fx.listenerToken, q, { c: first.body.data.trackHistory.nextCursor });
    expect(second.body.data.trackHistory.items.map((i: { title: string }) => i.title)).to.deep.equal(['Song 0']);
    expect(second.body.data.trackHistory.nextCursor).to.equal(null);
  });

  it('nowPlaying is empty before any observation; limits and tampered cursors are VALIDATION_ERROR; a disabled module is NOT_FOUND', async () => {
    const fx = await ingestFixture(server.url);
    const empty = await gql(server.url, fx.station.slug, fx.listenerToken, '{ nowPlaying { track { title } freshness { status } } }');
    expect(empty.body.data.nowPlaying).to.deep.equal({ track: null, freshness: { status: 'empty' } });
    const limit = await gql(server.url, fx.station.slug, fx.listenerToken, '{ trackHistory(limit: 101) { nextCursor } }');
    expect(limit.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
    const cursor = await gql(server.url, fx.station.slug, fx.listenerToken, '{ trackHistory(cursor: "abc.def") { nextCursor } }');
    expect(cursor.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { modules: { nowPlaying: false } });
    const off = await gql(server.url, fx.station.slug, fx.listenerToken, '{ nowPlaying { stationId } }');
    expect(off.body.data.nowPlaying).to.equal(null);
    expect(off.body.errors[0].extensions.code).to.equal('NOT_FOUND');
  });
});
