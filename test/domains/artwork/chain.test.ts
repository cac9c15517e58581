import { randomUUID } from 'node:crypto';
import { requiresSingleRedis } from '../../support/mode.ts';
import { expect } from 'chai';
import sharp from 'sharp';
import { createBlockingRedis, type Redis } from '../../../src/lib/redis.ts';
import { keys } from '../../../src/lib/keys.ts';
import type { FeedMessage } from '../../../src/feed/bus.ts';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { ingest, ingestFixture, until } from '../../support/ingest.ts';
import { ImageServer, bombPng, png } from '../../support/imageServer.ts';
import { uploaded } from '../media/helpers.ts';

// Artwork you can trust (docs/now-playing.md#the-source-chain): the source chain, checks in the worker, kept
// images and their variants, the `artwork` object, against a local image server speaking real HTTP.

describe('artwork: checked, kept and labelled', function () {
  this.timeout(30_000);
  const images = new ImageServer();
  const { clock, server } = useClockedServer('2026-06-01T12:00:00Z', { workers: true, env: { WEBHOOKS_ALLOW_INSECURE: '1' } });
  let subscriber: Redis | null = null;
  const messages: FeedMessage[] = [];

  before(async () => {
    await images.start();
  });
  after(async () => {
    subscriber?.disconnect();
    await images.stop();
  });

  /** The feed bus as a gateway hears it: the Redis server's channels, in embedded mode the process' in-memory store. */
  async function listen(ctx: Mocha.Context) {
    requiresSingleRedis(ctx, 'a pattern over every feed channel (sharded channels have none)');
    if (subscriber) return;
    subscriber = createBlockingRedis(server.svc.config.redis);
    subscriber.on('pmessage', (_p: string, _c: string, raw: string) => messages.push(JSON.parse(raw) as FeedMessage));
    await subscriber.psubscribe(keys.feedChannelPattern);
  }

  const station = (overrides: Record<string, unknown> = {}) => ingestFixture(server.url, { rundownFollowing: false, ...overrides });
  const nowPlaying = async (slug: string, token: string) =>
    (await request(server.url, 'GET', `/api/v1/stations/${slug}/now-playing`, { token })).body.track;
  const artOf = (slug: string, token: string, source?: string) =>
    until(async () => {
      const track = await nowPlaying(slug, token);
      return track?.artwork && (!source || track.artwork.source === source) ? track : null;
    });
  const checkOf = (stationId: string, url: string) =>
    until(() => server.svc.db('artwork_checks').where({ station_id: stationId, url }).first());
  /** Absolute URLs name the public base URL; the test server listens elsewhere. */
  const local = (url: string) => url.replace(server.svc.config.publicBaseUrl, server.url);
  const path = (name: string) => `/${name}-${randomUUID().slice(0, 8)}`;

  it('keeps an ingest image: artworkUrl is the kept 600 variant, `artwork` says ingest, variants are square JPEGs never upscaled, served with ETag and Range', async function () {
    await listen(this);
    const { station: st, ingestToken, listenerToken } = await station();
    const url = images.serve(path('cover'), await png(1, 800, 800));
    await ingest(server.url, st, ingestToken, { artist: 'Air', title: 'La Femme d’Argent', artworkUrl: url });
    const track = await artOf(st.slug, listenerToken);
    expect(track.artwork.source).to.equal('ingest');
    expect(track.artwork).to.include({ width: 800, height: 800 });
    const base = `${server.svc.config.publicBaseUrl}/api/media/public/${st.id}/`;
    expect(track.artwork.url.startsWith(base)).to.equal(true);
    expect(track.artworkUrl).to.equal(track.artwork.variants['600']);
    for (const [side, expected] of [
      ['300', 300],
      ['600', 600],
      ['1200', 800],
    ] as const) {
      const res = await fetch(local(track.artwork.variants[side]));
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('image/jpeg');
      expect(res.headers.get('etag')).to.match(/^"[0-9a-f]{64}"$/);
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      expect([meta.width, meta.height]).to.deep.equal([expected, expected]);
    }
    const ranged = await fetch(local(track.artwork.variants['300']), { headers: { range: 'bytes=0-9' } });
    expect(ranged.status).to.equal(206);
    // The history item of the play shows the same.
    const history = await request(server.url, 'GET', `/api/v1/stations/${st.slug}/track-history`, { token: listenerToken });
    expect(history.body.items[0].artwork).to.deep.equal(track.artwork);
    const live = await request(server.url, 'GET', `/api/v1/stations/${st.slug}/live`, { token: listenerToken });
    expect(live.body.nowPlaying.track.artwork).to.deep.equal(track.artwork);
    // The follow-up frame carried the kept art; the first one had none yet.
    const rows = await until(() => {
      // With a track: the station's creation wrote its empty now-playing row (track null) before.
      const mine = messages.filter((m) => m.stationId === st.id && m.kind === 'now-playing' && (m.data as { track: unknown }).track);
      return mine.some((m) => (m.data as { track: { artwork: unknown } }).track?.artwork) ? mine : null;
    });
    expect((rows[0].data as { track: { artwork: unknown } }).track.artwork).to.equal(null);
    expect((rows.at(-1)?.data as { track: { artwork: unknown } }).track.artwork).to.deep.equal(track.artwork);
  });

  it('with rundown following, the follow job resolves the art once it has answered the ingest: one job an ingest, no artwork.resolve', async () => {
    const queued: Array<[string, unknown]> = [];
    const enqueue = server.svc.jobs.enqueue.bind(server.svc.jobs);
    server.svc.jobs.enqueue = ((name: string, payload: unknown, ...rest: unknown[]) => {
      queued.push([name, payload]);
      return (enqueue as (...args: unknown[]) => ReturnType<typeof enqueue>)(name, payload, ...rest);
    }) as typeof enqueue;
    try {
      const { station: st, ingestToken, listenerToken } = await station({ rundownFollowing: true });
      const url = images.serve(path('followed'), await png(2, 640, 640));
      const res = await ingest(server.url, st, ingestToken, { artist: 'Followed', title: 'Resolved Afterwards', artworkUrl: url });
      expect(res.status).to.equal(200);
      expect(res.body.outcome, 'answered by the follow job').to.equal('no-live-broadcast');
      const track = await artOf(st.slug, listenerToken, 'ingest');
      expect(track.artwork).to.include({ width: 640, height: 640 });
      const id = (await server.svc.db('observations').where({ station_id: st.id }).first('id')).id as string;
      const of = (name: string) => queued.filter(([n, p]) => n === name && (p as { observationId?: string }).observationId === id);
      expect(of('nowPlaying.follow').map(([, p]) => p)).to.deep.equal([{ observationId: id, stationId: st.id, resolveArt: true }]);
      expect(of('artwork.resolve'), 'no job of its own').to.deep.equal([]);
      expect(
        queued.some(([n, p]) => n === 'artwork.check' && (p as { url?: string }).url === url),
        'the follow job queued the check',
      ).to.equal(true);
    } finally {
      server.svc.jobs.enqueue = enqueue;
    }
  });

  it('stores an image once per SHA-256: two URLs with the same bytes share one kept asset', async () => {
    const { station: st, ingestToken, listenerToken } = await station();
    const bytes = await png(2, 640, 640);
    const a = images.serve(path('same-a'), bytes);
    const b = images.serve(path('same-b'), bytes);
    await ingest(server.url, st, ingestToken, { artist: 'A', title: 'One', artworkUrl: a });
    await artOf(st.slug, listenerToken);
    await ingest(server.url, st, ingestToken, { artist: 'B', title: 'Two', artworkUrl: b });
    await until(async () => ((await nowPlaying(st.slug, listenerToken))?.title === 'Two' ? true : null));
    await checkOf(st.id, b);
    expect(await server.svc.db('artwork_images').where({ station_id: st.id }).count({ n: '*' }).first()).to.deep.equal({ n: 1 });
  });

  for (const [name, make, reason] of [
    ['a 100 px thumbnail', () => png(3, 100, 100), 'too-small'],
    ['a wide banner', () => png(4, 1000, 400), 'not-square'],
    ['corrupt bytes', async () => Buffer.concat([(await png(5, 600, 600)).subarray(0, 40), Buffer.from('garbage')]), 'not-an-image'],
    [
      'a GIF',
      () =>
        sharp({ create: { width: 600, height: 600, channels: 3, background: '#123456' } })
          .gif()
          .toBuffer(),
      'not-an-image',
    ],
    ['a decompression bomb (a tiny PNG declaring 50000 × 50000)', async () => bombPng(), 'too-large'],
  ] as const) {
    it(`refuses ${name} (${reason}): never shown, the reason is in the review`, async () => {
      const { station: st, ingestToken, listenerToken } = await station();
      const url = images.serve(path('bad'), await make());
      await ingest(server.url, st, ingestToken, { artist: 'Bad', title: name, artworkUrl: url });
      const check = await checkOf(st.id, url);
      expect(check).to.include({ status: 'rejected', reason });
      const track = await until(async () => {
        const t = await nowPlaying(st.slug, listenerToken);
        return t && !('artworkUrl' in t) ? t : null;
      });
      expect(track.artwork).to.equal(null);
      const review = await admin(server.url, 'GET', `/stations/${st.id}/artwork/recent`);
      expect(review.status).to.equal(200);
      expect(review.body.tracks[0].rejected).to.deep.equal([{ source: 'ingest', url, reason, at: check.checked_at.toISOString() }]);
    });
  }

  it('remembers a failure 24 h without fetching again, then checks the URL anew', async () => {
    const { station: st, ingestToken, listenerToken } = await station();
    const where = path('later');
    const url = images.serve(where, await png(6, 120, 120));
    await ingest(server.url, st, ingestToken, { artist: 'C', title: 'First', artworkUrl: url });
    expect(await checkOf(st.id, url)).to.include({ reason: 'too-small' });
    images.serve(where, await png(6, 700, 700));
    await ingest(server.url, st, ingestToken, { artist: 'C', title: 'Second', artworkUrl: url });
    await until(async () => ((await nowPlaying(st.slug, listenerToken))?.title === 'Second' ? true : null));
    await until(async () => (await server.svc.db('observations').where({ station_id: st.id, title: 'Second' }).first())?.artwork_view);
    expect(images.hits.get(where)).to.equal(1);
    clock.advance(24 * 3600 * 1000 + 1000);
    await ingest(server.url, st, ingestToken, { artist: 'C', title: 'Third', artworkUrl: url });
    const track = await artOf(st.slug, listenerToken, 'ingest');
    expect(track.title).to.equal('Third');
    expect(images.hits.get(where)).to.equal(2);
  });

  it('keeps a reported URL it could not fetch as the artworkUrl (a redirect loop, a host that does not answer), with `artwork` from the next source', async () => {
    const { station: st, ingestToken, listenerToken } = await station();
    // The station logo, the chain's last source: a track shows it once its own URL's check failed.
    const logo = await uploaded(server.url, st.id, await png(8, 400, 400), 'image/png');
    expect(
      (await admin(server.url, 'PATCH', `/stations/${st.id}`, { artwork: { stationImageVersionId: logo.versionId } })).status,
    ).to.equal(200);
    // An https URL no host answers on; and a redirect loop over http.
    const loop = `${images.url}/loop/0`;
    await ingest(server.url, st, ingestToken, { artist: 'D', title: 'Loop', artworkUrl: loop });
    expect(await checkOf(st.id, loop)).to.include({ status: 'rejected', reason: 'unreachable' });
    expect(images.hits.get('/loop/3')).to.equal(1);
    expect(images.hits.get('/loop/4')).to.equal(undefined);
    const https = 'https://127.0.0.1:1/cover.jpg';
    await ingest(server.url, st, ingestToken, { artist: 'D', title: 'Down', artworkUrl: https });
    expect(await checkOf(st.id, https)).to.include({ reason: 'unreachable' });
    // Before its check the track shows the URL with `artwork: null`; only once resolved after it, the logo.
    const track = await artOf(st.slug, listenerToken, 'station');
    expect(track.title).to.equal('Down');
    expect(track.artworkUrl).to.equal(https);
  });

  it('a hanging host holds back no other station: its check stays pending while another is kept', async () => {
    const a = await station();
    const b = await station();
    const hang = `${images.url}/hang-${randomUUID()}`;
    await ingest(server.url, a.station, a.ingestToken, { artist: 'E', title: 'Hang', artworkUrl: hang });
    for (let i = 0; i < 3; i++)
      await ingest(server.url, a.station, a.ingestToken, { artist: 'E', title: `Hang ${i}`, artworkUrl: `${hang}-${i}` });
    const good = images.serve(path('fine'), await png(7, 600, 600));
    const started = Date.now();
    await ingest(server.url, b.station, b.ingestToken, { artist: 'F', title: 'Fine', artworkUrl: good });
    await artOf(b.station.slug, b.listenerToken, 'ingest');
    expect(Date.now() - started).to.be.below(5000);
    expect(await server.svc.db('artwork_checks').where({ station_id: a.station.id }).first()).to.equal(undefined);
  });

  it('cuts a 2 GB body at 10 MiB (too-large) without growing the worker’s memory past the bound', async () => {
    const { station: st, ingestToken } = await station();
    const rssBefore = process.memoryUsage().rss;
    const huge = `${images.url}/huge-${randomUUID()}`;
    await ingest(server.url, st, ingestToken, { artist: 'G', title: 'Huge', artworkUrl: huge });
    const bomb = images.serve(path('bomb'), bombPng());
    await ingest(server.url, st, ingestToken, { artist: 'G', title: 'Bomb', artworkUrl: bomb });
    expect(await checkOf(st.id, huge)).to.include({ reason: 'too-large' });
    expect(await checkOf(st.id, bomb)).to.include({ reason: 'too-large' });
    // Read stops at 10 MiB; what the socket buffers on top stays far below the 2 GB offered.
    expect(images.hugeBytesSent).to.be.below(64 * 1024 ** 2);
    // The stated bound: 8 checks × 10 MiB bodies + 2 decodes × 25 Mpx × 4 B ≈ 280 MiB over the baseline.
    expect(process.memoryUsage().rss - rssBefore).to.be.below(280 * 1024 ** 2);
  });
});
