import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'chai';
import { admin, request } from '../../support/http.ts';
import { ADMIN_TOKEN } from '../../support/env.ts';
import { createToken, eventually } from '../../support/factories.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';
import { insertBroadcast } from '../../support/scheduleRows.ts';
import { sharedServer, useSharedServerWithWorkers, type TestServer } from '../../support/server.ts';

// docs/now-playing.md#play-log-music-reporting: GET /admin/v1/stations/{id}/plays, and the track-history filters.

const plays = (url: string, stationId: string, query: string) => admin(url, 'GET', `/stations/${stationId}/plays?${query}`);

describe('play log', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  /** A Berlin station with plays around the spring DST change (2026-03-29, 02:00 CET → 03:00 CEST) reported by a labelled encoder. */
  async function dstStation() {
    const { station } = await ingestFixture(server.url, { timezone: 'Europe/Berlin', rundownFollowing: false });
    const { token } = await createToken(server.url, station.id, ['ingest:write'], { label: 'Studio A encoder' });
    const report = async (body: Record<string, unknown>) => {
      const res = await ingest(server.url, station, token, body);
      expect(res.status, res.text).to.equal(200);
    };
    await report({
      eventId: 'e1',
      observedAt: Date.parse('2026-03-28T23:00:00Z'),
      artist: 'Before',
      title: 'Range start',
      isPlaying: true,
    });
    await report({
      eventId: 'e2',
      observedAt: Date.parse('2026-03-29T00:30:00Z'),
      artist: 'Nina, "Simone"',
      title: 'Feeling Good,\r\nagain',
      album: 'I Put a "Spell"',
      durationSeconds: 171,
      sourceTrackId: 'USRC17607839',
      isPlaying: true,
    });
    await report({ eventId: 'e3', observedAt: Date.parse('2026-03-29T01:30:00Z'), artist: 'After', title: 'Summer time', isPlaying: true });
    await report({
      eventId: 'e4',
      observedAt: Date.parse('2026-03-29T22:00:00Z'),
      artist: 'Next',
      title: 'Day (excluded)',
      isPlaying: true,
    });
    // No track at all: not a play.
    await report({ eventId: 'e5', observedAt: Date.parse('2026-03-29T12:00:00Z'), isPlaying: false });
    return station;
  }
  const DAY = 'from=2026-03-28T23:00:00Z&to=2026-03-29T22:00:00Z';

  it('JSON: every observation with a track in [from, to), by play time, with local times across the DST change', async () => {
    const station = await dstStation();
    const res = await plays(server.url, station.id, DAY);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.body).to.include({
      stationId: station.id,
      timezone: 'Europe/Berlin',
      from: '2026-03-28T23:00:00.000Z',
      to: '2026-03-29T22:00:00.000Z',
    });
    expect(res.body.plays.map((p: { title: string }) => p.title)).to.deep.equal(['Range start', 'Feeling Good,\r\nagain', 'Summer time']);
    const [first, second, third] = res.body.plays;
    expect(first.localTime).to.equal('2026-03-29T00:00:00+01:00');
    expect(second).to.deep.equal({
      playedAt: '2026-03-29T00:30:00.000Z',
      localTime: '2026-03-29T01:30:00+01:00',
      artist: 'Nina, "Simone"',
      title: 'Feeling Good,\r\nagain',
      album: 'I Put a "Spell"',
      durationSeconds: 171,
      sourceTrackId: 'USRC17607839',
      outcome: 'recorded',
      broadcastId: null,
      programTitle: null,
      rundownItemId: null,
      credentialLabel: 'Studio A encoder',
      isrc: null,
      // playedAt + durationSeconds, earlier than the next play (01:30).
      endedAt: '2026-03-29T00:32:51.000Z',
      // A station without streams: no listener figures (docs/audience.md).
      performances: null,
      performancesByStream: {},
      // The listener inbox's columns (docs/inbox.md, "Likes"): no votes.
      likes: 0,
      dislikes: 0,
    });
    // 01:30 UTC is 03:30 summer time: the local hour 02:xx does not exist that day.
    expect(third.localTime).to.equal('2026-03-29T03:30:00+02:00');
    // The same instants written with an offset select the same plays.
    const offset = await plays(server.url, station.id, 'from=2026-03-29T00:00:00%2B01:00&to=2026-03-30T00:00:00%2B02:00');
    expect(offset.body.plays).to.have.length(3);
  });

  it('CSV: RFC 4180 with a header row, CRLF, quoted commas, quotes and line breaks, as a named download', async () => {
    const station = await dstStation();
    const res = await request(server.url, 'GET', `/admin/v1/stations/${station.id}/plays?${DAY}&format=csv`, { token: ADMIN_TOKEN });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).to.equal(
      `attachment; filename="${station.slug}-plays-20260328T230000Z-20260329T220000Z.csv"`,
    );
    const lines = res.text.split('\r\n');
    expect(lines[0]).to.equal(
      'playedAt,localTime,artist,title,album,durationSeconds,sourceTrackId,outcome,broadcastId,programTitle,rundownItemId,credentialLabel,isrc,endedAt,performances,performancesByStream,likes,dislikes',
    );
    expect(res.text).to.include(
      '\r\n2026-03-29T00:30:00.000Z,2026-03-29T01:30:00+01:00,"Nina, ""Simone""","Feeling Good,\r\nagain","I Put a ""Spell""",171,USRC17607839,recorded,,,,Studio A encoder,,2026-03-29T00:32:51.000Z,,{},0,0\r\n',
    );
    expect(res.text.endsWith('\r\n')).to.equal(true);
  });

  it('refuses a missing or bad from/to, to <= from, and a range over 31 days (400); 31 days exactly is fine', async () => {
    const { station } = await ingestFixture(server.url);
    for (const query of [
      '',
      'from=2026-01-01T00:00:00Z',
      'from=yesterday&to=2026-01-02T00:00:00Z',
      'from=2026-01-01T00:00:00&to=2026-01-02T00:00:00',
      'from=2026-01-02T00:00:00Z&to=2026-01-02T00:00:00Z',
      'from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00.001Z',
      'from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&format=xml',
    ]) {
      const res = await plays(server.url, station.id, query);
      expect(res.status, query).to.equal(400);
      expect(res.body.error.code, query).to.equal('VALIDATION_ERROR');
    }
    expect((await plays(server.url, station.id, 'from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z')).status).to.equal(200);
    expect((await plays(server.url, 'st_nope', 'from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z')).status).to.equal(404);
  });

  it('streams a 100 000-play month with bounded memory', async function () {
    this.timeout(120_000);
    const { station } = await ingestFixture(server.url, { timezone: 'America/New_York' });
    await server.svc.db.raw(
      `INSERT INTO observations (id, station_id, fingerprint, artist, title, album, duration_seconds, source_track_id, is_playing, observed_at, received_at, sort_at, outcome, accepted, followed_at)
       SELECT gen_random_uuid(), ?, 'fp' || g, 'Artist ' || g, 'Title, "' || g || '"', 'Album ' || g, 180, 'ISRC' || g, true, t, t, t, 'recorded', true, t
       FROM generate_series(1, 100000) AS g, LATERAL (SELECT timestamptz '2026-10-01T00:00:00Z' + (g * interval '26 seconds') AS t) AS ts`,
      [station.id],
    );
    const res = await fetch(
      `${server.url}/admin/v1/stations/${station.id}/plays?from=2026-10-01T00:00:00Z&to=2026-11-01T00:00:00Z&format=csv`,
      { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
    );
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-length')).to.equal(null);
    // Live heap only: a full collection before each sample (the server runs in this process).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const liveHeap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const baseline = liveHeap();
    let peak = 0;
    let sampledAt = 0;
    let bytes = 0;
    let newlines = 0;
    let firstChunkBytes = 0;
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      if (!firstChunkBytes) firstChunkBytes = chunk.length;
      bytes += chunk.length;
      const text = decoder.decode(chunk, { stream: true });
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) newlines++;
      if (bytes - sampledAt > 1_000_000) {
        sampledAt = bytes;
        peak = Math.max(peak, liveHeap() - baseline);
      }
    }
    expect(newlines).to.equal(100_001);
    // Server and client together never held more than a few batches: far less than the ~12 MB body
    // (the 100 000 rows as objects alone would take several times that).
    expect(bytes).to.be.above(10_000_000);
    expect(peak, `peak live heap growth ${(peak / 1e6).toFixed(1)} MB for ${(bytes / 1e6).toFixed(1)} MB`).to.be.below(bytes / 4);
  });
});

describe('track history filters', () => {
  const { server } = useSharedServerWithWorkers();

  it('from/to select [from, to) by play time, broadcastId the items followed against it, and cursors are bound to them', async () => {
    const { station, ingestToken, listenerToken } = await ingestFixture(server.url);
    const now = Date.now();
    const { broadcastId } = await insertBroadcast(server.svc.db, {
      stationId: station.id,
      startsAt: new Date(now - 3600_000),
      endsAt: new Date(now + 3600_000),
      items: [{ artist: 'Queen', title: 'Bohemian Rhapsody', plannedStartsAt: new Date(now - 600_000) }],
    });
    // Whole seconds, as the history reports them back.
    const t = (minutesAgo: number) => new Date(Math.floor(now / 1000) * 1000 - minutesAgo * 60_000).toISOString();
    // Before the broadcast (no live broadcast: not followed), then three during it.
    await ingest(server.url, station, ingestToken, {
      eventId: 'h1',
      observedAt: Date.parse(t(90)),
      artist: 'Old',
      title: 'Before',
      isPlaying: true,
    });
    for (const [i, minutesAgo] of [30, 20, 10].entries()) {
      const res = await ingest(server.url, station, ingestToken, {
        eventId: `h${i + 2}`,
        observedAt: Date.parse(t(minutesAgo)),
        artist: 'Queen',
        title: 'Bohemian Rhapsody',
        isPlaying: true,
      });
      expect(res.body.outcome, res.text).to.equal('matched');
    }
    const history = (query: string) =>
      request(server.url, 'GET', `/api/v1/stations/${station.slug}/track-history?${query}`, { token: listenerToken });
    const titles = (res: { body: { items: Array<{ observedAt: string }> } }) => res.body.items.map((i) => i.observedAt);

    expect(titles(await history(`from=${t(30)}&to=${t(10)}`))).to.deep.equal([t(20), t(30)]);
    expect(titles(await history(`from=${t(91)}`))).to.have.length(4);
    expect(titles(await history(`broadcastId=${broadcastId}`))).to.deep.equal([t(10), t(20), t(30)]);
    const page1 = await history(`broadcastId=${broadcastId}&limit=2`);
    expect(page1.body.items).to.have.length(2);
    const page2 = await history(`broadcastId=${broadcastId}&limit=2&cursor=${page1.body.nextCursor}`);
    expect(titles(page2)).to.deep.equal([t(30)]);
    // A cursor used with other filters, or without them, is refused.
    for (const query of [
      `limit=2&cursor=${page1.body.nextCursor}`,
      `broadcastId=${broadcastId}&from=${t(60)}&limit=2&cursor=${page1.body.nextCursor}`,
    ]) {
      const res = await history(query);
      expect(res.status, query).to.equal(400);
      expect(res.body.error.issues[0].path).to.equal('cursor');
    }
    // Bad values are 400.
    for (const query of ['from=yesterday', 'broadcastId=nope', `from=${t(10)}&to=${t(20)}`])
      expect((await history(query)).status, query).to.equal(400);
    // GraphQL takes the same filters.
    const gql = await request(server.url, 'POST', `/api/v1/stations/${station.slug}/graphql`, {
      token: listenerToken,
      json: { query: `{ trackHistory(broadcastId: "${broadcastId}", from: "${t(25)}") { items { observedAt } } }` },
    });
    expect(gql.status, gql.text).to.equal(200);
    expect(gql.body.data.trackHistory.items.map((i: { observedAt: string }) => i.observedAt)).to.deep.equal([t(10), t(20)]);
    // Filtered and unfiltered history in one document are separate cached reads.
    const both = await request(server.url, 'POST', `/api/v1/stations/${station.slug}/graphql`, {
      token: listenerToken,
      json: {
        query: `{ all: trackHistory { items { observedAt } } during: trackHistory(broadcastId: "${broadcastId}") { items { observedAt } } }`,
      },
    });
    expect(both.body.data.all.items, both.text).to.have.length(4);
    expect(both.body.data.during.items, both.text).to.have.length(3);
    await eventually(() => true);
  });
});
