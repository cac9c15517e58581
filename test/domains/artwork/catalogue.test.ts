import { randomUUID } from 'node:crypto';
import { requiresSingleRedis } from '../../support/mode.ts';
import { expect } from 'chai';
import { createBlockingRedis, type Redis } from '../../../src/lib/redis.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { keys } from '../../../src/lib/keys.ts';
import type { FeedMessage } from '../../../src/feed/bus.ts';
import { MISS_RETRY_MS, cacheKey } from '../../../src/domains/artwork/catalogue/lookup.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { request } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { ingest, ingestFixture, until } from '../../support/ingest.ts';
import { FakeCatalogues } from '../../support/fakeCatalogues.ts';
import { startWorkers } from '../../../workers/index.ts';

// Artwork lookup (docs/now-playing.md#artwork-worker): iTunes first, then MusicBrainz + Cover Art
// Archive, against a local server speaking their formats.

describe('artwork lookup', () => {
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const fake = new FakeCatalogues();
  let server: TestServer;
  let workers: Awaited<ReturnType<typeof startWorkers>>;
  let subscriber: Redis;
  const messages: FeedMessage[] = [];

  before(async () => {
    await fake.start();
    server = await startTestServer({
      clock,
      env: {
        ARTWORK_ITUNES_BASE_URL: fake.url,
        ARTWORK_MUSICBRAINZ_BASE_URL: fake.url,
        ARTWORK_COVERART_BASE_URL: fake.url,
        ARTWORK_TIMEOUT_MS: '300',
      },
    });
    workers = await startWorkers(server.svc);
    subscriber = createBlockingRedis(server.svc.config.redis);
    subscriber.on('pmessage', (_p: string, _c: string, raw: string) => messages.push(JSON.parse(raw) as FeedMessage));
    await subscriber.psubscribe(keys.feedChannelPattern);
  });
  after(async () => {
    subscriber.disconnect();
    await workers.close();
    await server.close();
    await fake.stop();
  });
  beforeEach(() => fake.reset());

  /** A catalogue track with a unique title (the cache is keyed by artist and title). */
  function catalogueTrack(withCover = true) {
    const cover = randomUUID();
    const track = {
      artist: 'Daft Punk',
      title: `One More Time ${randomUUID().slice(0, 8)}`,
      album: 'Discovery',
      releaseIds: [randomUUID(), cover],
      coverReleaseId: withCover ? cover : undefined,
    };
    fake.tracks.push(track);
    return track;
  }
  const station = () => ingestFixture(server.url, { artworkLookup: true, rundownFollowing: false });
  const storedArtwork = async (stationId: string) =>
    (await server.svc.db('observations').where({ station_id: stationId }).first())?.catalogue_url ?? null;
  const ownArtwork = async (stationId: string) =>
    (await server.svc.db('observations').where({ station_id: stationId }).first())?.artwork_url ?? null;
  const artworkJob = async (stationId: string) => {
    const row = await server.svc.db('observations').where({ station_id: stationId }).orderBy('receipt_seq', 'desc').first();
    return server.svc.jobs.queue('default').getJob(`artwork-${row.id}`);
  };

  it('fills the stored track from iTunes (600×600, the matching result, not the first) and publishes a follow-up now-playing row', async function () {
    requiresSingleRedis(this, 'a pattern over every feed channel (sharded channels have none)');
    const track = catalogueTrack();
    const { station: st, ingestToken, listenerToken } = await station();
    const res = await ingest(server.url, st, ingestToken, { artist: track.artist, title: track.title });
    expect(res.status).to.equal(200);
    const url = await eventually(() => storedArtwork(st.id));
    expect(url).to.equal(`https://is1-ssl.mzstatic.com/image/thumb/Music/${encodeURIComponent(track.title)}/600x600bb.jpg`);
    expect(fake.requests.musicbrainz).to.have.length(0);
    const np = await request(server.url, 'GET', `/api/v1/stations/${st.slug}/now-playing`, { token: listenerToken });
    expect(np.body.track.artworkUrl).to.equal(url);
    const rows = await until(() => {
      // With a track: the station's creation wrote its empty now-playing row (track null) before.
      const mine = messages.filter((m) => m.stationId === st.id && m.kind === 'now-playing' && (m.data as { track: unknown }).track);
      return mine.length >= 2 ? mine : null;
    });
    expect((rows[0].data as { track: object }).track).not.to.have.property('artworkUrl');
    expect((rows[1].data as { track: { artworkUrl: string } }).track.artworkUrl).to.equal(url);
  });

  it('falls back to MusicBrainz + Cover Art Archive when iTunes has nothing, trying releases until one has a front cover (upgraded to HTTPS)', async () => {
    const track = catalogueTrack();
    fake.modes.itunes = 'miss';
    const { station: st, ingestToken } = await station();
    await ingest(server.url, st, ingestToken, { artist: track.artist, title: track.title });
    const url = await eventually(() => storedArtwork(st.id));
    expect(url).to.equal(`https://coverartarchive.org/release/${track.coverReleaseId}/829521842-500.jpg`);
    expect(fake.requests.coverart).to.have.length(2);
    expect(decodeURIComponent(fake.requests.musicbrainz[0])).to.include(`recording:"${track.title}" AND artist:"Daft Punk"`);
  });

  it('falls back when iTunes times out (ARTWORK_TIMEOUT_MS)', async () => {
    const track = catalogueTrack();
    fake.modes.itunes = 'hang';
    const { station: st, ingestToken } = await station();
    await ingest(server.url, st, ingestToken, { artist: track.artist, title: track.title });
    const url = await eventually(() => storedArtwork(st.id));
    expect(url).to.match(/^https:\/\/coverartarchive\.org\//);
    expect(fake.requests.itunes).to.have.length(1);
  });

  it('accepts only HTTPS artwork: an insecure iTunes URL is passed over, an insecure cover host is a miss', async () => {
    const track = catalogueTrack();
    fake.modes.itunes = 'insecure';
    fake.modes.coverart = 'insecure';
    const { station: st, ingestToken } = await station();
    await ingest(server.url, st, ingestToken, { artist: track.artist, title: track.title });
    const job = await until(() => artworkJob(st.id).then((j) => (j?.finishedOn ? j : null)));
    expect(job.returnvalue).to.deep.equal({ status: 'miss', source: 'lookup' });
    expect(await storedArtwork(st.id)).to.equal(null);
  });

  it('caches a miss: the next play of the track asks no catalogue until the miss TTL has passed', async () => {
    const track = catalogueTrack(false);
    fake.modes.itunes = 'miss';
    const { station: st, ingestToken } = await station();
    await ingest(server.url, st, ingestToken, { eventId: 'm1', artist: track.artist, title: track.title });
    await eventually(() => artworkJob(st.id).then((j) => j?.finishedOn));
    expect(fake.requests.itunes).to.have.length(1);
    expect(fake.requests.musicbrainz).to.have.length(1);
    const cached = JSON.parse((await server.svc.redis.get(cacheKey(track))) as string);
    expect(cached).to.deep.equal({ miss: true, retryAt: clock.now().getTime() + MISS_RETRY_MS });

    await ingest(server.url, st, ingestToken, { eventId: 'm2', artist: track.artist, title: track.title });
    const second = await until(() => artworkJob(st.id).then((j) => (j?.finishedOn ? j : null)));
    expect(second.returnvalue).to.deep.equal({ status: 'miss', source: 'cache' });
    expect(fake.requests.itunes).to.have.length(1);

    clock.advance(MISS_RETRY_MS + 1000);
    fake.modes.itunes = 'normal';
    await ingest(server.url, st, ingestToken, { eventId: 'm3', artist: track.artist, title: track.title });
    await eventually(async () => (await server.svc.db('observations').where({ station_id: st.id, event_id: 'm3' }).first())?.catalogue_url);
    expect(fake.requests.itunes).to.have.length(2);
  });

  it('caches a hit: the next play of the track is filled without asking a catalogue', async () => {
    const track = catalogueTrack();
    const first = await station();
    await ingest(server.url, first.station, first.ingestToken, { artist: track.artist, title: track.title });
    await eventually(() => storedArtwork(first.station.id));
    const second = await station();
    await ingest(server.url, second.station, second.ingestToken, { artist: track.artist, title: track.title });
    expect(await eventually(() => storedArtwork(second.station.id))).to.equal(await storedArtwork(first.station.id));
    expect(fake.requests.itunes).to.have.length(1);
  });

  it('when every catalogue fails nothing is cached and the job fails for a retry', async () => {
    const track = catalogueTrack();
    fake.modes.itunes = 'hang';
    fake.modes.musicbrainz = 'error';
    const { station: st, ingestToken } = await station();
    await ingest(server.url, st, ingestToken, { artist: track.artist, title: track.title });
    const job = await until(() => artworkJob(st.id).then((j) => (j && j.attemptsMade >= 1 ? j : null)));
    expect(job.failedReason).to.match(/answered 503|failed/);
    expect(await server.svc.redis.get(cacheKey(track))).to.equal(null);
    expect(await storedArtwork(st.id)).to.equal(null);
    await job.remove().catch(() => undefined);
  });

  it('is not asked when the station has artwork lookup off or the ingest sent artworkUrl', async () => {
    const track = catalogueTrack();
    const off = await ingestFixture(server.url, { rundownFollowing: false });
    await ingest(server.url, off.station, off.ingestToken, { artist: track.artist, title: track.title });
    const sent = await station();
    await ingest(server.url, sent.station, sent.ingestToken, {
      artist: track.artist,
      title: track.title,
      artworkUrl: 'https://cdn.example/own.jpg',
    });
    expect(await artworkJob(off.station.id)).to.equal(undefined);
    expect(await artworkJob(sent.station.id)).to.equal(undefined);
    expect(await ownArtwork(sent.station.id)).to.equal('https://cdn.example/own.jpg');
    expect(fake.requests.itunes).to.have.length(0);
  });

  it('limits concurrent requests per provider (iTunes 4 at a time)', async () => {
    fake.delayMs = 100;
    const tracks = Array.from({ length: 8 }, () => catalogueTrack());
    const stations = await Promise.all(tracks.map(() => station()));
    await Promise.all(
      tracks.map((t, i) => ingest(server.url, stations[i].station, stations[i].ingestToken, { artist: t.artist, title: t.title })),
    );
    await eventually(async () => (await Promise.all(stations.map((s) => storedArtwork(s.station.id)))).every(Boolean), {
      timeoutMs: 10_000,
    });
    expect(fake.requests.itunes).to.have.length(8);
    expect(fake.maxInFlight.itunes).to.be.at.most(4).and.at.least(2);
  });
});
