import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { createStation, createToken } from '../../support/factories.ts';
import { ingest, ingestFixture, INGEST_PATH } from '../../support/ingest.ts';
import { startWorkers } from '../../../workers/index.ts';

// POST /api/v1/integrations/playback: the request surface (station parameters, credential, content
// type, body size, field rules). Outcomes after storage are in following.test.ts.

const countRows = async (server: TestServer, stationId: string): Promise<number> => {
  const [{ count }] = await server.svc.db('observations').where({ station_id: stationId }).count({ count: '*' });
  return Number(count);
};

describe('now-playing ingest: request surface', () => {
  let server: TestServer;
  let workers: Awaited<ReturnType<typeof startWorkers>>;
  before(async () => {
    server = await startTestServer();
    workers = await startWorkers(server.svc);
  });
  after(async () => {
    await workers.close();
    await server.close();
  });

  it('accepts an observation for ?stationSlug= and for ?stationId= of the credential’s station', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const bySlug = await ingest(server.url, station, ingestToken, { artist: 'A', title: 'One' });
    expect(bySlug.status, bySlug.text).to.equal(200);
    expect(bySlug.body).to.deep.equal({ accepted: true, outcome: 'recorded' });
    const byId = await ingest(server.url, station, ingestToken, { artist: 'A', title: 'Two' }, { query: `stationId=${station.id}` });
    expect(byId.status, byId.text).to.equal(200);
    expect(await countRows(server, station.id)).to.equal(2);
  });

  it('another method on the ingest path is 405 with Allow: POST, an unknown integrations path 404 — both {error: string}', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await request(server.url, method, `/api/v1/integrations/playback?stationSlug=${station.slug}`, { token: ingestToken });
      expect(res.status, method).to.equal(405);
      expect(res.headers.get('allow'), method).to.equal('POST');
      expect(res.body, method).to.deep.equal({ error: 'Method not allowed; use POST.' });
    }
    const other = await request(server.url, 'POST', '/api/v1/integrations/nothing-here', { token: ingestToken, json: {} });
    expect(other.status).to.equal(404);
    expect(other.body).to.deep.equal({ error: 'No such route.' });
    expect((await request(server.url, 'GET', '/api/v1/nothing-here')).body.error.code, 'elsewhere the listener shape').to.equal(
      'NOT_FOUND',
    );
    expect(await countRows(server, station.id)).to.equal(0);
  });

  it('both or neither station parameter is 400, an unknown query parameter is 400; errors are {error: string}', async () => {
    const { station, ingestToken } = await ingestFixture(server.url);
    for (const query of [`stationSlug=${station.slug}&stationId=${station.id}`, '', `stationSlug=${station.slug}&foo=1`]) {
      const res = await ingest(server.url, station, ingestToken, { artist: 'A', title: 'B' }, { query });
      expect(res.status, query).to.equal(400);
      expect(res.body).to.have.all.keys('error');
      expect(res.body.error).to.be.a('string');
    }
    const res = await ingest(server.url, station, ingestToken, {}, { query: '' });
    expect(res.body.error).to.match(/stationSlug|stationId/);
    expect(await countRows(server, station.id)).to.equal(0);
  });

  it('401 for a missing credential (before the query is looked at), the raw token without `Bearer `, a wrong scope, another station’s credential or an unknown station', async () => {
    const { station, ingestToken } = await ingestFixture(server.url);
    const other = await createStation(server.url);
    const { token: otherIngest } = await createToken(server.url, other.id, ['ingest:write']);
    const { token: listenerOnly } = await createToken(server.url, station.id, ['listener:read']);
    const body = JSON.stringify({ artist: 'A', title: 'B' });
    const post = (query: string, headers: Record<string, string>) =>
      request(server.url, 'POST', `${INGEST_PATH}?${query}`, { headers: { 'content-type': 'application/json', ...headers }, body });
    const cases: Array<[string, Record<string, string>]> = [
      [`stationSlug=${station.slug}`, {}],
      [`stationSlug=${station.slug}`, { authorization: ingestToken }],
      [`stationSlug=${station.slug}`, { authorization: `Bearer ${listenerOnly}` }],
      [`stationSlug=${station.slug}`, { authorization: `Bearer ${otherIngest}` }],
      [`stationId=${station.id}`, { authorization: `Bearer ${otherIngest}` }],
      ['stationSlug=no-such-station', { authorization: `Bearer ${ingestToken}` }],
      // No Bearer credential at all: 401 first, whatever the query says.
      ['', {}],
      [`stationSlug=${station.slug}&stationId=${station.id}`, {}],
      ['stationSlug=x', { authorization: ingestToken }],
    ];
    for (const [query, headers] of cases) {
      const res = await post(query, headers);
      expect(res.status, `${query} ${JSON.stringify(headers)}`).to.equal(401);
      expect(res.body.error).to.be.a('string');
    }
    expect(await countRows(server, station.id)).to.equal(0);
    expect(await countRows(server, other.id)).to.equal(0);
  });

  it('403 for a switched-off station (after authentication); a public-offline one still ingests', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { active: false });
    const off = await ingest(server.url, station, ingestToken, { artist: 'A', title: 'B' });
    expect(off.status).to.equal(403);
    expect(off.body.error).to.be.a('string');
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { active: true, publicOnline: false });
    expect((await ingest(server.url, station, ingestToken, { artist: 'A', title: 'B' })).status).to.equal(200);
  });

  it('415 for a non-JSON content type, 400 for a body that is not a JSON object', async () => {
    const { station, ingestToken } = await ingestFixture(server.url);
    const path = `${INGEST_PATH}?stationSlug=${station.slug}`;
    const form = await request(server.url, 'POST', path, {
      token: ingestToken,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'artist=A&title=B',
    });
    expect(form.status).to.equal(415);
    expect(form.body.error).to.match(/application\/json/);
    const text = await request(server.url, 'POST', path, {
      token: ingestToken,
      headers: { 'content-type': 'text/plain' },
      body: '{"artist":"A","title":"B"}',
    });
    expect(text.status).to.equal(415);
    const gzipped = await request(server.url, 'POST', path, {
      token: ingestToken,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync('{"artist":"A","title":"B"}'),
    });
    expect(gzipped.status).to.equal(415);
    for (const body of ['{"artist": "A",', '[]', '"x"', 'null', '']) {
      const res = await request(server.url, 'POST', path, {
        token: ingestToken,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body,
      });
      expect(res.status, body).to.equal(400);
      expect(res.body.error).to.match(/body/);
    }
    expect(await countRows(server, station.id)).to.equal(0);
  });

  it('accepts a body of exactly 8 KiB and refuses 8 KiB + 1 byte with 413', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const json = JSON.stringify({ artist: 'A', title: 'B' });
    const path = `${INGEST_PATH}?stationSlug=${station.slug}`;
    const exact = await request(server.url, 'POST', path, {
      token: ingestToken,
      headers: { 'content-type': 'application/json' },
      body: json + ' '.repeat(8192 - json.length),
    });
    expect(exact.status, exact.text).to.equal(200);
    const over = await request(server.url, 'POST', path, {
      token: ingestToken,
      headers: { 'content-type': 'application/json' },
      body: json + ' '.repeat(8193 - json.length),
    });
    expect(over.status).to.equal(413);
    expect(over.body.error).to.be.a('string');
    expect(await countRows(server, station.id)).to.equal(1);
  });

  it('enforces 8 KiB while reading: a chunked upload is refused before it ends', async () => {
    const { station, ingestToken } = await ingestFixture(server.url);
    const url = new URL(`${server.url}${INGEST_PATH}?stationSlug=${station.slug}`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        url,
        { method: 'POST', headers: { authorization: `Bearer ${ingestToken}`, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      // 12 KiB sent, the request never ended: only a limit enforced while reading can answer.
      req.write(`{"title":"${'x'.repeat(12 * 1024)}`);
    });
    expect(status).to.equal(413);
    expect(await countRows(server, station.id)).to.equal(0);
  });

  const invalidBodies: Array<[string, Record<string, unknown>, RegExp]> = [
    ['over-long artist', { artist: 'a'.repeat(501), title: 'T' }, /artist/],
    ['over-long title', { artist: 'A', title: 't'.repeat(501) }, /title/],
    ['over-long album', { artist: 'A', title: 'T', album: 'x'.repeat(501) }, /album/],
    ['over-long eventId', { eventId: 'e'.repeat(101), artist: 'A', title: 'T' }, /eventId/],
    ['over-long sourceTrackId', { sourceTrackId: 's'.repeat(121), artist: 'A', title: 'T' }, /sourceTrackId/],
    ['over-long artworkUrl', { artworkUrl: `https://x.example/${'a'.repeat(2048)}`, artist: 'A', title: 'T' }, /artworkUrl/],
    ['empty title', { artist: 'A', title: '' }, /title/],
    ['observedAt as string', { observedAt: '2026-01-01T00:00:00Z', artist: 'A', title: 'T' }, /observedAt/],
    ['fractional observedAt', { observedAt: 1.5, artist: 'A', title: 'T' }, /observedAt/],
    ['negative observedAt', { observedAt: -1, artist: 'A', title: 'T' }, /observedAt/],
    ['observedAt beyond the range', { observedAt: 8640000000000001, artist: 'A', title: 'T' }, /observedAt/],
    ['durationSeconds out of range', { artist: 'A', title: 'T', durationSeconds: 86401 }, /durationSeconds/],
    ['negative durationSeconds', { artist: 'A', title: 'T', durationSeconds: -1 }, /durationSeconds/],
    ['durationSeconds as string', { artist: 'A', title: 'T', durationSeconds: '200' }, /durationSeconds/],
    ['duration out of range', { artist: 'A', title: 'T', duration: 90000 }, /duration/],
    ['duration differing from durationSeconds', { artist: 'A', title: 'T', duration: 200, durationSeconds: 201 }, /duration/],
    ['isPlaying as string', { artist: 'A', title: 'T', isPlaying: 'true' }, /isPlaying/],
    ['artist as number', { artist: 5, title: 'T' }, /artist/],
    ['unknown field', { artist: 'A', title: 'T', bpm: 120 }, /bpm/],
    ['artist without title', { artist: 'A' }, /title/],
    ['title without artist', { title: 'T' }, /artist/],
    ['no track while playing', { album: 'X' }, /title/],
    ['streamTitle with an over-long part', { streamTitle: `${'a'.repeat(501)} - T` }, /streamTitle/],
  ];
  for (const [name, body, field] of invalidBodies) {
    it(`400 naming the field, nothing stored: ${name}`, async () => {
      const { station, ingestToken } = await ingestFixture(server.url);
      const res = await ingest(server.url, station, ingestToken, body);
      expect(res.status, res.text).to.equal(400);
      expect(res.body).to.have.all.keys('error');
      expect(res.body.error).to.match(field);
      expect(await countRows(server, station.id)).to.equal(0);
    });
  }

  it('binds every field: duration alias, streamTitle split, isPlaying default true; sourceTrackId stored but never shown', async () => {
    const { station, ingestToken, listenerToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const observedAt = Date.now() - 5000;
    const res = await ingest(server.url, station, ingestToken, {
      eventId: 'ev-bind-1',
      observedAt,
      streamTitle: 'Daft Punk - One More Time',
      album: 'Discovery',
      sourceTrackId: 'src-42',
      artworkUrl: 'https://img.example/one.jpg',
      duration: 320,
      durationSeconds: 320,
    });
    expect(res.status, res.text).to.equal(200);
    const row = await server.svc.db('observations').where({ station_id: station.id }).first();
    expect(row).to.include({
      event_id: 'ev-bind-1',
      artist: 'Daft Punk',
      title: 'One More Time',
      album: 'Discovery',
      source_track_id: 'src-42',
      is_playing: true,
      duration_seconds: 320,
    });
    expect(row.observed_at.getTime()).to.equal(observedAt);
    const np = await request(server.url, 'GET', `/api/v1/stations/${station.slug}/now-playing`, { token: listenerToken });
    expect(np.body.track).to.deep.equal({
      artist: 'Daft Punk',
      title: 'One More Time',
      album: 'Discovery',
      durationSeconds: 320,
      artworkUrl: 'https://img.example/one.jpg',
      artwork: null,
      isPlaying: true,
      observedAt: new Date(observedAt).toISOString(),
      receivedAt: row.received_at.toISOString(),
    });
    expect(np.text).not.to.include('src-42');
  });

  it('a streamTitle without ` - ` is stored whole as the title with artist null; `duration` alone sets durationSeconds', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const res = await ingest(server.url, station, ingestToken, { streamTitle: 'Station Jingle-Mix', duration: 12.5 });
    expect(res.status, res.text).to.equal(200);
    const row = await server.svc.db('observations').where({ station_id: station.id }).first();
    expect(row).to.include({ artist: null, title: 'Station Jingle-Mix', duration_seconds: 12.5 });
  });

  it('a body without a track is allowed with isPlaying false (outcome not-playing)', async () => {
    const { station, ingestToken } = await ingestFixture(server.url);
    const res = await ingest(server.url, station, ingestToken, { isPlaying: false });
    expect(res.body).to.deep.equal({ accepted: true, outcome: 'not-playing' });
    expect(await countRows(server, station.id)).to.equal(1);
  });

  it('is rate limited per credential with 429 {error} (RATE_LIMIT_INGEST_PER_MINUTE)', async () => {
    const limited = await startTestServer({ env: { RATE_LIMIT_INGEST_PER_MINUTE: '2' } });
    try {
      const { station, ingestToken } = await ingestFixture(limited.url, { rundownFollowing: false });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await ingest(limited.url, station, ingestToken, { eventId: `rl-${i}`, artist: 'A', title: 'B' })).status);
      expect(statuses).to.deep.equal([200, 200, 429]);
      const res = await ingest(limited.url, station, ingestToken, { artist: 'A', title: 'B' });
      expect(res.body.error).to.be.a('string');
      expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      // A bucket of 2 a minute has a token back within 30 s.
      expect(Number(res.headers.get('retry-after')))
        .to.be.greaterThan(0)
        .and.at.most(30);
    } finally {
      await limited.close();
    }
  });
});
