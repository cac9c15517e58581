import { expect } from 'chai';
import { requiresSingleRedis } from '../../support/mode.ts';
import { createBlockingRedis, type Redis } from '../../../src/lib/redis.ts';
import { keys } from '../../../src/lib/keys.ts';
import type { FeedMessage } from '../../../src/feed/bus.ts';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';

// GET …/now-playing, GET …/track-history and the `now-playing` feed row.

const T0 = new Date('2026-06-01T12:00:00Z');

describe('now-playing and track-history reads', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });

  // Rundown following is off for these stations: outcomes are not what is read here.
  const fixture = () => ingestFixture(server.url, { rundownFollowing: false });
  const nowPlaying = (slug: string, token: string) => request(server.url, 'GET', `/api/v1/stations/${slug}/now-playing`, { token });
  const history = (slug: string, token: string, query = '') =>
    request(server.url, 'GET', `/api/v1/stations/${slug}/track-history${query}`, { token });

  describe('GET …/now-playing', () => {
    it('is `empty` with track null when nothing was ever reported (the other freshness values null); ETag and no-store', async () => {
      const { station, listenerToken } = await fixture();
      const res = await nowPlaying(station.slug, listenerToken);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        contractVersion: 1,
        stationId: station.id,
        timezone: 'Europe/Berlin',
        track: null,
        elapsedSeconds: null,
        endsAt: null,
        freshness: { status: 'empty', thresholdSeconds: null, ageSeconds: null, observedAt: null, receivedAt: null },
      });
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('etag')).to.match(/^"[0-9a-f]{64}"$/);
      const again = await request(server.url, 'GET', `/api/v1/stations/${station.slug}/now-playing`, {
        token: listenerToken,
        headers: { 'if-none-match': res.headers.get('etag') as string },
      });
      expect(again.status).to.equal(304);
    });

    it('derives elapsedSeconds and endsAt at response time and moves fresh → stale past the station threshold', async () => {
      const { station, ingestToken, listenerToken } = await fixture();
      await ingest(server.url, station, ingestToken, { observedAt: T0.getTime(), artist: 'A', title: 'Long Song', durationSeconds: 200 });
      clock.advance(10_400);
      let res = await nowPlaying(station.slug, listenerToken);
      expect(res.body.elapsedSeconds).to.equal(10);
      expect(res.body.endsAt).to.equal(new Date(T0.getTime() + 200_000).toISOString());
      expect(res.body.freshness).to.deep.equal({
        status: 'fresh',
        thresholdSeconds: 600,
        ageSeconds: 10,
        observedAt: T0.toISOString(),
        receivedAt: T0.toISOString(),
      });
      clock.set(T0.getTime() + 250_000);
      res = await nowPlaying(station.slug, listenerToken);
      expect(res.body.elapsedSeconds, 'never beyond the duration').to.equal(200);
      clock.set(T0.getTime() + 600_999);
      expect((await nowPlaying(station.slug, listenerToken)).body.freshness).to.include({ status: 'fresh', ageSeconds: 600 });
      clock.set(T0.getTime() + 601_000);
      expect((await nowPlaying(station.slug, listenerToken)).body.freshness).to.include({ status: 'stale', ageSeconds: 601 });
      await admin(server.url, 'PATCH', `/stations/${station.id}`, { nowPlayingFreshnessSeconds: 900 });
      expect((await nowPlaying(station.slug, listenerToken)).body.freshness).to.include({ status: 'fresh', thresholdSeconds: 900 });
    });

    it('elapsedSeconds and endsAt are null when the duration is unknown or the track is not playing', async () => {
      const { station, ingestToken, listenerToken } = await fixture();
      await ingest(server.url, station, ingestToken, { eventId: 'a', observedAt: T0.getTime(), artist: 'A', title: 'No Length' });
      let res = await nowPlaying(station.slug, listenerToken);
      expect(res.body).to.include({ elapsedSeconds: null, endsAt: null });
      expect(res.body.track.durationSeconds).to.equal(null);
      await ingest(server.url, station, ingestToken, {
        eventId: 'b',
        observedAt: T0.getTime() + 1,
        artist: 'A',
        title: 'Paused',
        durationSeconds: 100,
        isPlaying: false,
      });
      res = await nowPlaying(station.slug, listenerToken);
      expect(res.body).to.include({ elapsedSeconds: null, endsAt: null });
      expect(res.body.track).to.include({ title: 'Paused', isPlaying: false });
    });

    it('without observedAt the age counts from receipt and observedAt is null', async () => {
      const { station, ingestToken, listenerToken } = await fixture();
      await ingest(server.url, station, ingestToken, { artist: 'A', title: 'Live', durationSeconds: 60 });
      clock.advance(5000);
      const res = await nowPlaying(station.slug, listenerToken);
      expect(res.body.track).to.include({ observedAt: null, receivedAt: T0.toISOString() });
      expect(res.body.freshness).to.include({ ageSeconds: 5, observedAt: null, receivedAt: T0.toISOString() });
      expect(res.body.endsAt).to.equal(new Date(T0.getTime() + 60_000).toISOString());
    });

    it('the latest is the greatest observedAt: a late retry of an old track never replaces the current one', async () => {
      const { station, ingestToken, listenerToken } = await fixture();
      await ingest(server.url, station, ingestToken, { eventId: 'new', observedAt: T0.getTime() - 1000, artist: 'A', title: 'Current' });
      clock.advance(2000);
      await ingest(server.url, station, ingestToken, { eventId: 'old', observedAt: T0.getTime() - 120_000, artist: 'A', title: 'Earlier' });
      expect((await nowPlaying(station.slug, listenerToken)).body.track.title).to.equal('Current');
      // Equal observedAt: the later receipt wins.
      await ingest(server.url, station, ingestToken, { eventId: 'tie', observedAt: T0.getTime() - 1000, artist: 'A', title: 'Correction' });
      expect((await nowPlaying(station.slug, listenerToken)).body.track.title).to.equal('Correction');
    });

    it('shows only HTTPS artwork and never the sourceTrackId', async () => {
      const { station, ingestToken, listenerToken } = await fixture();
      await ingest(server.url, station, ingestToken, {
        artist: 'A',
        title: 'B',
        artworkUrl: 'http://insecure.example/a.jpg',
        sourceTrackId: 'secret-source-id',
      });
      const res = await nowPlaying(station.slug, listenerToken);
      expect(res.body.track).not.to.have.property('artworkUrl');
      expect(res.text).not.to.include('secret-source-id');
    });

    it('needs a listener:read credential; a switched-off module is 404 MODULE_DISABLED', async () => {
      const { station, ingestToken, listenerToken } = await fixture();
      expect((await nowPlaying(station.slug, ingestToken)).status).to.equal(401);
      await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { nowPlaying: false, trackHistory: false } });
      const np = await nowPlaying(station.slug, listenerToken);
      expect(np.status).to.equal(404);
      expect(np.body.error.code).to.equal('MODULE_DISABLED');
      expect((await history(station.slug, listenerToken)).body.error.code).to.equal('MODULE_DISABLED');
    });
  });

  describe('GET …/track-history', () => {
    /** `count` plays of the same title, 3 minutes apart, the last one 3 minutes before T0. */
    async function played(count: number) {
      const f = await fixture();
      for (let i = 0; i < count; i++) {
        const res = await ingest(server.url, f.station, f.ingestToken, {
          eventId: `play-${i}`,
          observedAt: T0.getTime() - (count - i) * 180_000,
          artist: 'Band',
          title: 'Hit',
          durationSeconds: 180,
        });
        expect(res.status, res.text).to.equal(200);
      }
      return f;
    }

    it('lists playing observations newest first; duplicate titles at different times are separate items', async () => {
      const { station, ingestToken, listenerToken } = await played(3);
      await ingest(server.url, station, ingestToken, { isPlaying: false });
      const res = await history(station.slug, listenerToken);
      expect(res.status).to.equal(200);
      expect(res.body.contractVersion).to.equal(1);
      expect(res.body.nextCursor).to.equal(null);
      expect(res.body.items).to.have.length(3);
      expect(res.body.items.map((i: { observedAt: string }) => i.observedAt)).to.deep.equal(
        [1, 2, 3].map((n) => new Date(T0.getTime() - n * 180_000).toISOString()),
      );
      expect(res.body.items[0]).to.have.all.keys(
        'id',
        'artist',
        'title',
        'album',
        'durationSeconds',
        'artwork',
        'isPlaying',
        'observedAt',
        'receivedAt',
      );
      expect(new Set(res.body.items.map((i: { id: string }) => i.id)).size).to.equal(3);
    });

    it('pages with nextCursor until null; limit defaults to 25 and is 1..100', async () => {
      const { station, listenerToken } = await played(30);
      const first = await history(station.slug, listenerToken);
      expect(first.body.items).to.have.length(25);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await history(station.slug, listenerToken, `?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.status, res.text).to.equal(200);
        seen.push(...res.body.items.map((i: { id: string }) => i.id));
        cursor = res.body.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).to.equal(5);
      expect(seen).to.have.length(30);
      expect(new Set(seen).size).to.equal(30);
      for (const limit of ['0', '101', 'abc', '2.5']) {
        const res = await history(station.slug, listenerToken, `?limit=${limit}`);
        expect(res.status, limit).to.equal(400);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
        expect(res.body.error.issues[0].path).to.equal('limit');
      }
      expect((await history(station.slug, listenerToken, '?limit=100')).body.items).to.have.length(30);
      expect((await history(station.slug, listenerToken, '?page=2')).status, 'unknown parameter').to.equal(400);
    });

    it('a tampered cursor, or one of another station, is 400', async () => {
      const { station, listenerToken } = await played(3);
      const other = await played(3);
      const page = await history(station.slug, listenerToken, '?limit=1');
      const cursor = page.body.nextCursor as string;
      const tampered = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
      for (const bad of [tampered, 'not-a-cursor']) {
        const res = await history(station.slug, listenerToken, `?cursor=${encodeURIComponent(bad)}`);
        expect(res.status).to.equal(400);
        expect(res.body.error.issues[0].path).to.equal('cursor');
      }
      expect((await history(other.station.slug, other.listenerToken, `?cursor=${encodeURIComponent(cursor)}`)).status).to.equal(400);
    });
  });

  describe('the now-playing feed row', () => {
    let subscriber: Redis;
    const messages: FeedMessage[] = [];
    before(async function () {
      requiresSingleRedis(this, 'a pattern over every feed channel (sharded channels have none)');
      subscriber = createBlockingRedis(server.svc.config.redis);
      subscriber.on('pmessage', (_pattern: string, _channel: string, raw: string) => messages.push(JSON.parse(raw) as FeedMessage));
      await subscriber.psubscribe(keys.feedChannelPattern);
    });
    after(() => subscriber?.disconnect());

    it('every stored observation publishes the row after commit, in the now-playing response’s shape; rejected and collapsed ones publish nothing', async () => {
      const { station, ingestToken, listenerToken } = await fixture();
      // Observations' rows: the station's creation published its schedule, on-air and empty now-playing rows before.
      const mine = () =>
        messages.filter((m) => m.stationId === station.id && m.kind === 'now-playing' && (m.data as { track: unknown }).track);
      await ingest(server.url, station, ingestToken, {
        observedAt: T0.getTime() - 5000,
        artist: 'A',
        title: 'First',
        durationSeconds: 100,
      });
      const [first] = (await eventually(() => (mine().length === 1 ? mine() : null))) as FeedMessage[];
      expect(first).to.include({ kind: 'now-playing', entry: 'current', deleted: false });
      expect(first.data).to.deep.equal((await nowPlaying(station.slug, listenerToken)).body);
      const [row] = await server.svc.db('feed_rows').where({ station_id: station.id, kind: 'now-playing' });
      expect(row.data).to.deep.equal(first.data);

      await ingest(server.url, station, ingestToken, { artist: 'A', title: 'First', durationSeconds: 100 }); // collapsed
      await ingest(server.url, station, ingestToken, { observedAt: T0.getTime() + 301_000, artist: 'A', title: 'Future' }); // rejected
      await ingest(server.url, station, ingestToken, { eventId: 'x', artist: 'A', title: 'Second' });
      const all = (await eventually(() => (mine().length >= 2 ? mine() : null))) as FeedMessage[];
      expect(all).to.have.length(2);
      expect((all[1].data as { track: { title: string } }).track.title).to.equal('Second');
      expect(all[1].seq).to.be.greaterThan(all[0].seq);
    });

    it('an observation of an earlier moment arriving late is stored and sends no event: the row keeps showing the latest track', async () => {
      const { station, ingestToken, listenerToken } = await fixture();
      // Observations' rows: the station's creation published its schedule, on-air and empty now-playing rows before.
      const mine = () =>
        messages.filter((m) => m.stationId === station.id && m.kind === 'now-playing' && (m.data as { track: unknown }).track);
      await ingest(server.url, station, ingestToken, { eventId: 'now', observedAt: T0.getTime() - 5000, artist: 'A', title: 'Current' });
      const [first] = (await eventually(() => (mine().length === 1 ? mine() : null))) as FeedMessage[];
      const late = await ingest(server.url, station, ingestToken, {
        eventId: 'late',
        observedAt: T0.getTime() - 60_000,
        artist: 'A',
        title: 'Earlier',
      });
      expect(late.body).to.include({ accepted: true });
      const [row] = await server.svc.db('feed_rows').where({ station_id: station.id, kind: 'now-playing' });
      expect(Number(row.seq)).to.equal(first.seq);
      expect(row.data).to.deep.equal(first.data);
      expect((await nowPlaying(station.slug, listenerToken)).body.track.title).to.equal('Current');
      // The next change is the next event: nothing was sent for the late one in between.
      await ingest(server.url, station, ingestToken, { eventId: 'next', observedAt: T0.getTime() - 1000, artist: 'A', title: 'Next' });
      const all = (await eventually(() => (mine().length >= 2 ? mine() : null))) as FeedMessage[];
      expect(all.map((m) => (m.data as { track: { title: string } }).track.title)).to.deep.equal(['Current', 'Next']);
      const stored = await server.svc.db('observations').where({ station_id: station.id }).orderBy('sort_at');
      expect(stored.map((o: { title: string }) => o.title)).to.deep.equal(['Earlier', 'Current', 'Next']);
    });
  });
});
