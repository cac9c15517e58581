import { expect } from 'chai';
import { admin, request } from '../../support/http.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { gql } from '../../graphql/helpers.ts';
import { ADMIN_TOKEN } from '../../support/env.ts';

// docs/now-playing.md#body-fields, docs/now-playing.md#play-log-music-reporting: ingest takes an optional `isrc`, normalised
// and validated; it is never exposed to listeners; the play log gains `isrc` and `endedAt`.

describe('play log identifiers: isrc and endedAt', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('ingest stores isrc with hyphens removed and upper-cased', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const res = await ingest(server.url, station, ingestToken, { eventId: 'i1', artist: 'A', title: 'T', isrc: 'us-rc1-76-07839' });
    expect(res.status, res.text).to.equal(200);
    const row = await server.svc.db('observations').where({ station_id: station.id }).first();
    expect(row.isrc).to.equal('USRC17607839');
    // A retry with the same (normalised) payload is the same observation.
    const retry = await ingest(server.url, station, ingestToken, { eventId: 'i1', artist: 'A', title: 'T', isrc: 'USRC17607839' });
    expect(retry.body).to.deep.equal(res.body);
    // Another isrc under the same eventId is another payload: rejected.
    const misuse = await ingest(server.url, station, ingestToken, { eventId: 'i1', artist: 'A', title: 'T', isrc: 'GBAYE0601498' });
    expect(misuse.body).to.deep.equal({ accepted: false, outcome: 'rejected' });
  });

  for (const bad of ['USRC1760783', 'USRC176078390', 'U1RC17607839', 'USRC1760783X', 'US_RC17607839', '', 'ÜSRC17607839', '------------']) {
    it(`an isrc that is not ^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$ after normalising is 400 {error} naming isrc, nothing stored: ${JSON.stringify(bad)}`, async () => {
      const { station, ingestToken } = await ingestFixture(server.url);
      const res = await ingest(server.url, station, ingestToken, { artist: 'A', title: 'T', isrc: bad });
      expect(res.status, res.text).to.equal(400);
      expect(res.body).to.have.all.keys('error');
      expect(res.body.error).to.match(/isrc/);
      const [{ count }] = await server.svc.db('observations').where({ station_id: station.id }).count({ count: '*' });
      expect(Number(count)).to.equal(0);
    });
  }

  it('isrc is never shown to listeners: now-playing, track-history, GraphQL, the feed row', async () => {
    const { station, ingestToken, listenerToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const res = await ingest(server.url, station, ingestToken, { artist: 'A', title: 'T', isrc: 'GB-AYE-06-01498', durationSeconds: 100 });
    expect(res.status, res.text).to.equal(200);
    const np = await request(server.url, 'GET', `/api/v1/stations/${station.slug}/now-playing`, { token: listenerToken });
    expect(np.status).to.equal(200);
    expect(np.body.track.title).to.equal('T');
    expect(np.body.track).not.to.have.property('isrc');
    const history = await request(server.url, 'GET', `/api/v1/stations/${station.slug}/track-history`, { token: listenerToken });
    expect(history.body.items).to.have.length(1);
    expect(history.body.items[0]).not.to.have.property('isrc');
    for (const text of [np.text, history.text]) expect(text).not.to.match(/GBAYE0601498|isrc/i);
    const q = await gql(server.url, station.slug, listenerToken, '{ nowPlaying { track { title isrc } } }');
    expect(q.body.errors?.[0]?.message, JSON.stringify(q.body)).to.match(/isrc/);
    const intro = await gql(
      server.url,
      station.slug,
      listenerToken,
      '{ nowPlaying { track { title } } trackHistory { items { id title } } }',
    );
    expect(JSON.stringify(intro.body)).not.to.match(/GBAYE0601498/);
    const rows = await server.svc.db('feed_rows').where({ station_id: station.id });
    expect(rows.length).to.be.above(0);
    expect(JSON.stringify(rows)).not.to.match(/GBAYE0601498|isrc/i);
  });

  it('the play log has isrc and endedAt: the next play time or playedAt + durationSeconds, whichever is earlier; null when neither', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const at = (iso: string) => Date.parse(iso);
    const bodies = [
      // Cut short by the next observation.
      { eventId: 'p1', observedAt: at('2026-05-01T10:00:00Z'), artist: 'A', title: 'One', durationSeconds: 300, isrc: 'USRC17607839' },
      // Ends by its duration before the next one.
      { eventId: 'p2', observedAt: at('2026-05-01T10:02:00Z'), artist: 'B', title: 'Two', durationSeconds: 60.5 },
      // No duration: ends when playback stops (an observation without a track).
      { eventId: 'p3', observedAt: at('2026-05-01T10:05:00Z'), artist: 'C', title: 'Three' },
      { eventId: 'p4', observedAt: at('2026-05-01T10:07:00Z'), isPlaying: false },
      // The last one without a duration: unknown.
      { eventId: 'p5', observedAt: at('2026-05-01T10:09:00Z'), artist: 'D', title: 'Four' },
    ];
    for (const body of bodies) expect((await ingest(server.url, station, ingestToken, body)).status).to.equal(200);
    const range = 'from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z';
    const json = await admin(server.url, 'GET', `/stations/${station.id}/plays?${range}`);
    expect(json.status).to.equal(200);
    expect(json.body.plays.map((p: Record<string, unknown>) => [p.title, p.isrc, p.endedAt])).to.deep.equal([
      ['One', 'USRC17607839', '2026-05-01T10:02:00.000Z'],
      ['Two', null, '2026-05-01T10:03:00.500Z'],
      ['Three', null, '2026-05-01T10:07:00.000Z'],
      ['Four', null, null],
    ]);
    const csv = await request(server.url, 'GET', `/admin/v1/stations/${station.id}/plays?${range}&format=csv`, {
      token: ADMIN_TOKEN,
    });
    const lines = csv.text.split('\r\n');
    // The audience columns follow (docs/audience.md), then the listener inbox's (docs/inbox.md#likes).
    expect(lines[0].split(',').slice(-6, -4)).to.deep.equal(['isrc', 'endedAt']);
    expect(lines[1].split(',').slice(-6, -4)).to.deep.equal(['USRC17607839', '2026-05-01T10:02:00.000Z']);
    expect(lines[4].split(',').slice(-6, -4)).to.deep.equal(['', '']);
  });

  it('endedAt takes the next observation beyond the requested range', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    await ingest(server.url, station, ingestToken, {
      eventId: 'a',
      observedAt: Date.parse('2026-05-01T23:59:00Z'),
      artist: 'A',
      title: 'Late',
    });
    await ingest(server.url, station, ingestToken, {
      eventId: 'b',
      observedAt: Date.parse('2026-05-02T00:01:00Z'),
      artist: 'B',
      title: 'Next day',
    });
    const json = await admin(server.url, 'GET', `/stations/${station.id}/plays?from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z`);
    expect(json.body.plays).to.have.length(1);
    expect(json.body.plays[0].endedAt).to.equal('2026-05-02T00:01:00.000Z');
  });
});
