import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { refreshRecordsUsingMedia } from '../../src/domains/content/publish.ts';
import { readKey } from '../../src/lib/readCache.ts';
import { queriesDuring, startTestServer, useClockedServer, type TestServer } from '../support/server.ts';
import { requiresPostgresServer } from '../support/mode.ts';
import { admin, request, type Reply } from '../support/http.ts';
import { createToken, eventually, listenerFixture } from '../support/factories.ts';
import { ingest } from '../support/ingest.ts';
import { insertMedia, publish, published, putType, storeWithNullVariants } from '../domains/content/helpers.ts';
import { putBroadcast, putProgram, scheduleFixture } from '../domains/schedule/helpers.ts';
import { accident, currentBerlin, delivered } from '../domains/weather/helpers.ts';
import { gql } from '../graphql/helpers.ts';
import { FakeCatalogues } from '../support/fakeCatalogues.ts';
import { insertBroadcast } from '../support/scheduleRows.ts';
import { startWorkers } from '../../workers/index.ts';

// Listener reads answer from cached bytes + ETag (lib/readCache.ts). Each rule of the cache has a test
// here that fails without it: writes reach the next read in another web process, time-derived fields
// change exactly at their boundary, a 304 never comes before the credential gate, 304s and repeated
// reads do no database work, and the byte budget holds.

const get = (server: TestServer, token: string, path: string, headers: Record<string, string> = {}) =>
  request(server.url, 'GET', path, { token, headers });

describe('listener reads from cached bytes', () => {
  describe('every kind of write is visible on the next read in a second web process', () => {
    let a: TestServer;
    let b: TestServer;
    before(async () => {
      a = await startTestServer();
      b = await startTestServer();
    });
    after(async () => {
      await a.close();
      await b.close();
    });

    /**
     * Warms A's and B's caches with `path` (on B two reads: the second must come from memory, no statement), runs the
     * write on A, then expects A's next read to show it at once and B's to show it as soon as the
     * invalidation crossed (well before the cache's 10 s safety age).
     */
    async function crossProcess(token: string, path: string, write: () => Promise<unknown>, shows: (res: Reply) => boolean) {
      const before = await get(b, token, path);
      expect(before.status, before.text).to.equal(200);
      expect(shows(before), 'the write is not shown before it happens').to.equal(false);
      expect(await queriesDuring(b, () => get(b, token, path)), 'a repeated read is answered from memory').to.equal(0);
      expect(shows(await get(a, token, path))).to.equal(false);
      await write();
      expect(shows(await get(a, token, path)), `the writing process shows it at once: ${path}`).to.equal(true);
      await eventually(async () => shows(await get(b, token, path)), { timeoutMs: 3000 });
    }

    it('publish, republish and unpublish: content list, record by id and by slug; a content type change: schemas', async () => {
      const { station, token } = await listenerFixture(a.url);
      expect((await putType(a.url, station.id, 'news')).status).to.equal(200);
      const base = `/api/v1/stations/${station.slug}`;
      const id = randomUUID();
      await crossProcess(
        token,
        `${base}/content?type=news`,
        () => published(a.url, station.id, 'news', { title: 'First', slug: 'first' }, {}, id),
        (res) => res.body.records.length === 1,
      );
      await crossProcess(
        token,
        `${base}/content/${id}`,
        async () => {
          await admin(a.url, 'PUT', `/stations/${station.id}/records/${id}`, { type: 'news', values: { title: 'Second', slug: 'first' } });
          await publish(a.url, station.id, id);
        },
        (res) => res.body.values?.title === 'Second',
      );
      await crossProcess(
        token,
        `${base}/content/news/by-slug/first`,
        () => admin(a.url, 'POST', `/stations/${station.id}/records/${id}/unpublish`),
        (res) => res.status === 404,
      );
      await crossProcess(
        token,
        `${base}/schemas`,
        () => putType(a.url, station.id, 'events'),
        (res) => res.body.types.some((t: { key: string }) => t.key === 'events'),
      );
    });

    it('media variants rendered by another process: the record shows the variant path', async () => {
      const { station, token } = await listenerFixture(a.url);
      await putType(a.url, station.id, 'news');
      const image = await insertMedia(a, station.id);
      const id = await published(a.url, station.id, 'news', { title: 'Pic' }, { media: [{ versionId: image.versionId }] });
      // Variants are paths from the first delivery (docs/media.md#variants); a record stored before that rule
      // has null ones until the worker's media job re-presents it.
      await storeWithNullVariants(a, id);
      await crossProcess(
        token,
        `/api/v1/stations/${station.slug}/content/${id}`,
        async () => {
          // What the media.variants job does in a worker after rendering.
          expect(await refreshRecordsUsingMedia(a.svc, station.id, image.versionId)).to.equal(1);
        },
        (res) => res.body.media[0].variants.card !== null,
      );
    });

    it('schedule edits: schedule, programs, current broadcast and calendar', async () => {
      const fx = await scheduleFixture(a.url);
      const base = `/api/v1/stations/${fx.station.slug}`;
      const now = Date.now();
      const startsAt = new Date(now - 60_000).toISOString();
      const endsAt = new Date(now + 3_600_000).toISOString();
      const broadcastId = randomUUID();
      await crossProcess(
        fx.token,
        `${base}/broadcast/current`,
        () => putBroadcast(a.url, fx, startsAt, endsAt, {}, broadcastId),
        (res) => res.body.broadcast?.id === broadcastId,
      );
      await crossProcess(
        fx.token,
        `${base}/schedule`,
        () => putBroadcast(a.url, fx, startsAt, endsAt, { title: 'Renamed' }, broadcastId),
        (res) => res.body.broadcasts[0]?.title === 'Renamed',
      );
      await crossProcess(
        fx.token,
        `${base}/schedule.ics`,
        () => putBroadcast(a.url, fx, startsAt, endsAt, { title: 'Calendar name' }, broadcastId),
        (res) => res.text.includes('Calendar name'),
      );
      await crossProcess(
        fx.token,
        `${base}/programs`,
        () => putProgram(a.url, fx.station.id, { title: 'Evening Show', presenterIds: [fx.presenterId] }, fx.programId),
        (res) => res.body.programs[0]?.title === 'Evening Show',
      );
      await crossProcess(
        fx.token,
        `${base}/broadcast/current`,
        () => admin(a.url, 'DELETE', `/stations/${fx.station.id}/broadcasts/${broadcastId}`),
        (res) => res.body.broadcast === null,
      );
    });

    it('ingest: now-playing and track history', async () => {
      const { station, token } = await listenerFixture(a.url, { rundownFollowing: false });
      const { token: ingestToken } = await createToken(a.url, station.id, ['ingest:write']);
      const base = `/api/v1/stations/${station.slug}`;
      await crossProcess(
        token,
        `${base}/track-history`,
        () => ingest(a.url, station, ingestToken, { artist: 'A', title: 'One' }),
        (res) => res.body.items.length === 1,
      );
      // now-playing is valid for at most a second (its age moves): warm it and write within that second.
      const write = () => ingest(a.url, station, ingestToken, { artist: 'B', title: 'Two' });
      await write();
      await eventually(async () => (await get(b, token, `${base}/now-playing`)).body.track?.title === 'Two');
      await ingest(a.url, station, ingestToken, { artist: 'C', title: 'Three' });
      expect((await get(a, token, `${base}/now-playing`)).body.track.title).to.equal('Three');
      await eventually(async () => (await get(b, token, `${base}/now-playing`)).body.track?.title === 'Three');
    });

    it('seeded now-playing: a second web process answers the new song at once while every connection of its database pool is busy', async function () {
      requiresPostgresServer(this, 'a pool of connections kept busy by pg_sleep on a Postgres server');
      const { station, token } = await listenerFixture(a.url, { rundownFollowing: false });
      const { token: ingestToken } = await createToken(a.url, station.id, ['ingest:write']);
      const path = `/api/v1/stations/${station.slug}/now-playing`;
      expect((await ingest(a.url, station, ingestToken, { artist: 'A', title: 'One' })).status).to.equal(200);
      await eventually(async () => (await get(b, token, path)).body.track?.title === 'One');
      expect(await queriesDuring(b, () => get(b, token, path)), 'read from its cache (so refreshed at the change)').to.equal(0);

      // Every connection of B's pool sleeps for 1 s: nothing B reads from Postgres meanwhile can answer.
      const pool = (b.svc.db.client as { pool: { max: number; numUsed(): number } }).pool;
      const sleepers = Promise.all(Array.from({ length: pool.max }, () => b.svc.db.raw('SELECT pg_sleep(1.2)')));
      const busySince = Date.now();
      await eventually(() => pool.numUsed() === pool.max);
      expect((await ingest(a.url, station, ingestToken, { artist: 'B', title: 'Two' })).status).to.equal(200);
      await eventually(async () => (await get(b, token, path)).body.track?.title === 'Two', { timeoutMs: 2000, intervalMs: 20 });
      expect(Date.now() - busySince, 'answered while its pool was still busy (1.2 s)').to.be.below(700);
      await sleepers;
    });

    it('listener time: a stream read follows an ingest already audible on the stream, and a latency change, in every process', async () => {
      const stream = (latencySeconds: number) => ({
        streamUrls: [{ url: 'https://stream.example.org/a.mp3', key: 'mp3', latencySeconds }],
      });
      const { station, token } = await listenerFixture(a.url, { rundownFollowing: false, profile: stream(120) });
      const { token: ingestToken } = await createToken(a.url, station.id, ['ingest:write']);
      const path = `/api/v1/stations/${station.slug}/track-history?stream=mp3`;
      const titles = (res: Reply) => (res.body.items as Array<{ title: string }>).map((i) => i.title);
      await ingest(a.url, station, ingestToken, { observedAt: Date.now() - 5_000, artist: 'A', title: 'Recent' });
      // Played 200 s ago (its report came late): audible on a 120 s stream at once.
      await crossProcess(
        token,
        path,
        () => ingest(a.url, station, ingestToken, { observedAt: Date.now() - 200_000, artist: 'A', title: 'Late report' }),
        (res) => titles(res).includes('Late report'),
      );
      expect(titles(await get(b, token, path)), 'played 5 s ago: not audible on a 120 s stream').not.to.include('Recent');
      await crossProcess(
        token,
        path,
        () => admin(a.url, 'PATCH', `/stations/${station.id}`, { profile: stream(0) }),
        (res) => titles(res)[0] === 'Recent',
      );
    });

    it('rundown following: the track history filtered by broadcast lists an observation once a worker tied it to the broadcast', async () => {
      const { station, token } = await listenerFixture(a.url, { rundownFollowing: true });
      const { token: ingestToken } = await createToken(a.url, station.id, ['ingest:write']);
      const now = Date.now();
      const { broadcastId } = await insertBroadcast(a.svc.db, {
        stationId: station.id,
        startsAt: new Date(now - 600_000),
        endsAt: new Date(now + 3_000_000),
        items: [{ artist: 'Queen', title: 'Bohemian Rhapsody' }],
      });
      const path = `/api/v1/stations/${station.slug}/track-history?broadcastId=${broadcastId}`;
      // No worker runs: the ingest is answered `recorded` after its 2 s wait, the following job waits in the queue.
      const res = await ingest(a.url, station, ingestToken, { artist: 'Queen', title: 'Bohemian Rhapsody' });
      expect(res.body).to.deep.equal({ accepted: true, outcome: 'recorded' });
      for (const server of [a, b]) {
        expect((await get(server, token, path)).body.items).to.deep.equal([]);
        expect(await queriesDuring(server, () => get(server, token, path)), 'kept in memory').to.equal(0);
      }
      const workers = await startWorkers(a.svc);
      try {
        // Well before the cache's 10 s safety age: the follow invalidates the reads of every process.
        for (const server of [a, b])
          await eventually(async () => (await get(server, token, path)).body.items.length === 1, { timeoutMs: 3000 });
      } finally {
        await workers.close();
      }
    });

    it('admin station changes: the freshness threshold, the time zone, a module switched off', async () => {
      const fx = await scheduleFixture(a.url);
      const base = `/api/v1/stations/${fx.station.slug}`;
      await crossProcess(
        fx.token,
        `${base}/schedule`,
        () => admin(a.url, 'PATCH', `/stations/${fx.station.id}`, { timezone: 'America/New_York' }),
        (res) => res.body.timezone === 'America/New_York',
      );
      await crossProcess(
        fx.token,
        `${base}/programs`,
        () => admin(a.url, 'PATCH', `/stations/${fx.station.id}`, { modules: { programs: false } }),
        (res) => res.status === 404,
      );
    });

    it('weather and traffic stored by the admin API', async () => {
      const { station, token } = await listenerFixture(a.url, { timezone: 'Europe/Berlin', ...delivered('weather') });
      await admin(a.url, 'PATCH', `/stations/${station.id}`, delivered('traffic'));
      await eventually(async () => (await get(b, token, `/api/v1/stations/${station.slug}/traffic`)).status === 200);
      const observedAt = new Date(Date.now() - 60_000).toISOString();
      // Each answer shows an age, valid to the next second: two writes, the second read right after it.
      for (const [feed, body, shows] of [
        ['weather', { observedAt, snapshots: [currentBerlin] }, (res: Reply) => res.body.snapshots?.length === 1],
        [
          'traffic',
          { observedAt, snapshot: { area: 'Berlin', incidents: [accident] } },
          (res: Reply) => res.body.snapshot?.incidents?.length === 1,
        ],
      ] as const) {
        const path = `/api/v1/stations/${station.slug}/${feed}`;
        expect(shows(await get(b, token, path))).to.equal(false);
        const res = await admin(a.url, 'PUT', `/stations/${station.id}/${feed}`, body);
        expect(res.status, res.text).to.equal(200);
        expect(shows(await get(a, token, path))).to.equal(true);
        await eventually(async () => shows(await get(b, token, path)));
      }
    });
  });

  describe('artwork found by a worker process', () => {
    const fake = new FakeCatalogues();
    let web: TestServer;
    let worker: TestServer;
    before(async () => {
      await fake.start();
      const env = {
        ARTWORK_ITUNES_BASE_URL: fake.url,
        ARTWORK_MUSICBRAINZ_BASE_URL: fake.url,
        ARTWORK_COVERART_BASE_URL: fake.url,
        ARTWORK_TIMEOUT_MS: '300',
      };
      web = await startTestServer({ env });
      worker = await startTestServer({ env });
    });
    after(async () => {
      await web.close();
      await worker.close();
      await fake.stop();
    });

    it('the track history a web process holds shows the artwork once the worker stored it', async () => {
      const title = `One More Time ${randomUUID().slice(0, 8)}`;
      fake.tracks.push({ artist: 'Daft Punk', title, album: 'Discovery', releaseIds: [randomUUID()] });
      const { station, token } = await listenerFixture(web.url, { artworkLookup: true, rundownFollowing: false });
      const { token: ingestToken } = await createToken(web.url, station.id, ['ingest:write']);
      expect((await ingest(web.url, station, ingestToken, { artist: 'Daft Punk', title })).status).to.equal(200);
      const path = `/api/v1/stations/${station.slug}/track-history`;
      // No worker runs yet: the look-up job waits in the queue while the web process caches the answer.
      expect((await get(web, token, path)).body.items[0].artworkUrl).to.equal(undefined);
      expect(await queriesDuring(web, () => get(web, token, path))).to.equal(0);
      const workers = await startWorkers(worker.svc);
      try {
        await eventually(async () => typeof (await get(web, token, path)).body.items[0].artworkUrl === 'string', { timeoutMs: 8000 });
      } finally {
        await workers.close();
      }
    });
  });

  describe('refresh-ahead (ManualClock): the answers apps poll after a song change are ready before they ask', () => {
    const T0 = new Date('2026-06-01T12:00:00Z');
    const { clock, server } = useClockedServer(T0, { reset: true });

    /** A station with a listener credential and `play(title)`: an ingest of that song now. */
    async function songFixture() {
      const { station, token } = await listenerFixture(server.url, { rundownFollowing: false });
      const { token: ingestToken } = await createToken(server.url, station.id, ['ingest:write']);
      const play = (title: string) =>
        ingest(server.url, station, ingestToken, { observedAt: clock.now().getTime(), artist: 'A', title, durationSeconds: 200 });
      return { station, token, base: `/api/v1/stations/${station.slug}`, play };
    }

    it('an ingest computes the now-playing and live answers read from the cache again as the change is heard: the next reads do no database work', async () => {
      const { station, token, base, play } = await songFixture();
      expect((await play('One')).status).to.equal(200);
      for (const path of ['/now-playing', '/live']) {
        expect((await get(server, token, base + path)).status).to.equal(200); // computed
        expect(await queriesDuring(server, () => get(server, token, base + path)), 'then read from the cache').to.equal(0);
      }
      expect((await play('Two')).status).to.equal(200);
      const nowMs = () => clock.now().getTime();
      await eventually(
        () =>
          server.svc.reads.running(readKey('getNowPlaying', station.id), station.id, 'nowPlaying') === undefined &&
          server.svc.reads.peek(readKey('getNowPlaying', station.id), nowMs()) !== undefined &&
          server.svc.reads.peek(readKey('getLive', station.id), nowMs()) !== undefined,
        { timeoutMs: 3000 },
      );
      const queries = await queriesDuring(server, async () => {
        expect((await get(server, token, `${base}/now-playing`)).body.track.title).to.equal('Two');
        expect((await get(server, token, `${base}/live`)).body.nowPlaying.track.title).to.equal('Two');
      });
      expect(queries, 'both answers were computed when the song change was heard').to.equal(0);
    });

    it('an answer no app read from the cache is not computed again: the next read computes it', async () => {
      const { station, token, base, play } = await songFixture();
      expect((await play('One')).status).to.equal(200);
      expect((await get(server, token, `${base}/now-playing`)).status).to.equal(200); // computed, never read back
      expect((await play('Two')).status).to.equal(200);
      await eventually(() => server.svc.reads.peek(readKey('getNowPlaying', station.id), clock.now().getTime()) === undefined);
      // Nothing recomputes it: a moment later it is still not there.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(server.svc.reads.peek(readKey('getNowPlaying', station.id), clock.now().getTime())).to.equal(undefined);
      expect((await get(server, token, `${base}/now-playing`)).body.track.title).to.equal('Two');
    });
  });

  describe('seeded now-playing (ManualClock): the seeded answer is the answer a read gives', () => {
    const T0 = new Date('2026-06-01T12:00:00Z');
    const { clock, server } = useClockedServer(T0, { reset: true });

    it('byte for byte (the same ETag), for every kind of observation; one showing less than the answer kept is never put in its place', async () => {
      const { station, token } = await listenerFixture(server.url, { rundownFollowing: false });
      const { token: ingestToken } = await createToken(server.url, station.id, ['ingest:write']);
      const path = `/api/v1/stations/${station.slug}/now-playing`;
      const key = readKey('getNowPlaying', station.id);
      const seeded: string[] = [];
      const seed = server.svc.reads.seed.bind(server.svc.reads);
      server.svc.reads.seed = (...args: Parameters<typeof seed>) => {
        const kept = seed(...args);
        // The writing process hears its own change twice (at once, then from the bus): one seed per change.
        if (kept && seeded.at(-1) !== args[3].bytes.toString()) seeded.push(args[3].bytes.toString());
        return kept;
      };
      const bodies: Array<Record<string, unknown>> = [
        { artist: 'A', title: 'Plain', durationSeconds: 200 },
        { artist: 'A', title: 'Album', album: 'Long Player', durationSeconds: 201.5, artworkUrl: 'https://img.example.org/a.jpg' },
        { streamTitle: 'Some Artist - Some Title' },
        { artist: 'A', title: 'Observed', observedAt: T0.getTime() + 3 * 60_000 - 3_400, durationSeconds: 180 }, // set at 3 min
        { isPlaying: false },
      ];
      try {
        for (const [i, body] of bodies.entries()) {
          clock.set(T0.getTime() + i * 60_000);
          expect((await get(server, token, path)).status).to.equal(200); // read from the cache: refreshed at the change
          expect((await get(server, token, path)).status).to.equal(200);
          expect((await ingest(server.url, station, ingestToken, body)).status).to.equal(200);
          expect(seeded, JSON.stringify(body)).to.have.length(i + 1);
          // The refresh's own read has replaced it: the same bytes at the same instant.
          await eventually(() => server.svc.reads.running(key, station.id, 'nowPlaying') === undefined);
          expect(server.svc.reads.peek(key, clock.now().getTime())?.bytes.toString(), JSON.stringify(body)).to.equal(seeded[i]);
        }
        // An observation of an earlier moment leaves the row as it is: nothing is seeded.
        expect(
          (await ingest(server.url, station, ingestToken, { artist: 'Late', title: 'Retry', observedAt: T0.getTime() })).status,
        ).to.equal(200);
        expect(seeded).to.have.length(bodies.length);
        // A seed older than the answer kept (a change heard late) is not put in place.
        const stale = JSON.stringify({ v: [0, 0], np: JSON.parse(seeded[0]) });
        await eventually(() => server.svc.reads.running(key, station.id, 'nowPlaying') === undefined);
        const before = (await get(server, token, path)).text;
        expect(JSON.parse(before).track.title).to.equal(null); // the last one was `isPlaying: false`, no track
        server.svc.reads.drop(station.id, 'nowPlaying', stale);
        expect(seeded, 'older than what was kept').to.have.length(bodies.length);
        await eventually(async () => (await get(server, token, path)).text === before);
      } finally {
        server.svc.reads.seed = seed;
      }
    });
  });

  describe('time boundaries (ManualClock): a cached answer changes exactly when its bytes would', () => {
    const T0 = new Date('2026-06-01T12:00:00Z');
    const { clock, server } = useClockedServer(T0, { reset: true });

    it('now-playing: the same bytes (and 304) until the age reaches the next whole second, then the new age', async () => {
      const { station, token } = await listenerFixture(server.url, { rundownFollowing: false });
      const { token: ingestToken } = await createToken(server.url, station.id, ['ingest:write']);
      await ingest(server.url, station, ingestToken, {
        observedAt: T0.getTime() - 2_500,
        artist: 'A',
        title: 'Song',
        durationSeconds: 200,
      });
      const path = `/api/v1/stations/${station.slug}/now-playing`;
      const first = await get(server, token, path);
      expect(first.body.freshness.ageSeconds).to.equal(2);
      expect(first.body.elapsedSeconds).to.equal(2);
      const etag = first.headers.get('etag') as string;
      clock.set(T0.getTime() + 499); // age 2.999 s
      expect((await get(server, token, path, { 'if-none-match': etag })).status).to.equal(304);
      clock.set(T0.getTime() + 500); // age 3 s
      const next = await get(server, token, path, { 'if-none-match': etag });
      expect(next.status).to.equal(200);
      expect(next.body.freshness.ageSeconds).to.equal(3);
      expect(next.body.elapsedSeconds).to.equal(3);
    });

    it('now-playing on a stream: derived with no statement until a stored change becomes audible there, then that one', async () => {
      const profile = { streamUrls: [{ url: 'https://stream.example.org/a.mp3', key: 'mp3', latencySeconds: 10 }] };
      const { station, token } = await listenerFixture(server.url, { rundownFollowing: false, profile });
      const { token: ingestToken } = await createToken(server.url, station.id, ['ingest:write']);
      const start = clock.now().getTime();
      const at = (seconds: number) => clock.set(start + seconds * 1000);
      const play = (title: string) =>
        ingest(server.url, station, ingestToken, { observedAt: clock.now().getTime(), artist: 'A', title, durationSeconds: 200 });
      const path = `/api/v1/stations/${station.slug}/now-playing?stream=mp3`;
      const heard = async () => {
        const body = (await get(server, token, path)).body;
        return [body.track?.title ?? null, body.freshness.ageSeconds];
      };
      expect((await play('One')).status).to.equal(200);
      at(12);
      expect((await play('Two')).status).to.equal(200); // audible on the stream at 22 s
      at(13);
      expect(await heard()).to.deep.equal(['One', 3]); // computed
      const queries = await queriesDuring(server, async () => {
        at(14);
        expect(await heard()).to.deep.equal(['One', 4]);
        at(21);
        expect(await heard()).to.deep.equal(['One', 11]);
      });
      expect(queries, 'derived while nothing new became audible').to.equal(0);
      at(22);
      expect(await heard()).to.deep.equal(['Two', 0]);
    });

    it('now-playing: each new age is derived from the observation already read, with no statement, until the next ingest', async () => {
      const { station, token } = await listenerFixture(server.url, { rundownFollowing: false });
      const { token: ingestToken } = await createToken(server.url, station.id, ['ingest:write']);
      const play = (title: string) =>
        ingest(server.url, station, ingestToken, { observedAt: clock.now().getTime(), artist: 'A', title, durationSeconds: 200 });
      expect((await play('One')).status).to.equal(200);
      const path = `/api/v1/stations/${station.slug}/now-playing`;
      expect((await get(server, token, path)).body.freshness.ageSeconds).to.equal(0); // computed
      const start = clock.now().getTime();
      const queries = await queriesDuring(server, async () => {
        for (const seconds of [1, 2, 5, 30]) {
          clock.set(start + seconds * 1000);
          const body = (await get(server, token, path)).body;
          expect([body.freshness.ageSeconds, body.elapsedSeconds, body.track.title]).to.deep.equal([seconds, seconds, 'One']);
        }
      });
      expect(queries, 'the age moved without reading the observation again').to.equal(0);
      expect((await play('Two')).status).to.equal(200);
      const after = (await get(server, token, path)).body;
      expect([after.track.title, after.freshness.ageSeconds]).to.deep.equal(['Two', 0]);
    });

    it('weather: the freshness age moves at the next whole second since observedAt', async () => {
      const { station, token } = await listenerFixture(server.url, delivered('weather'));
      await admin(server.url, 'PUT', `/stations/${station.id}/weather`, {
        observedAt: new Date(T0.getTime() - 1_200).toISOString(),
        snapshots: [currentBerlin],
      });
      const path = `/api/v1/stations/${station.slug}/weather`;
      const first = await get(server, token, path);
      expect(first.body.freshness.ageSeconds).to.equal(1);
      clock.set(T0.getTime() + 799);
      expect((await get(server, token, path, { 'if-none-match': first.headers.get('etag') as string })).status).to.equal(304);
      clock.set(T0.getTime() + 800);
      expect((await get(server, token, path)).body.freshness.ageSeconds).to.equal(2);
    });

    it('current broadcast and schedule status: change exactly at the broadcast start and end, and answer 304 in between', async () => {
      const fx = await scheduleFixture(server.url);
      const starts = T0.getTime() + 600_000;
      const ends = starts + 3_600_000;
      const id = await putBroadcast(server.url, fx, new Date(starts).toISOString(), new Date(ends).toISOString());
      const current = `/api/v1/stations/${fx.station.slug}/broadcast/current`;
      const schedule = `/api/v1/stations/${fx.station.slug}/schedule`;
      const before = await get(server, fx.token, current);
      expect(before.body.broadcast).to.equal(null);
      expect(before.body.asOf).to.equal(T0.toISOString());
      expect((await get(server, fx.token, schedule)).body.broadcasts[0].status).to.equal('scheduled');
      clock.set(starts - 1);
      const held = await get(server, fx.token, current, { 'if-none-match': before.headers.get('etag') as string });
      expect(held.status, 'asOf is when the answer was computed: reused while nothing changes').to.equal(304);
      expect((await get(server, fx.token, schedule)).body.broadcasts[0].status).to.equal('scheduled');
      clock.set(starts);
      const live = await get(server, fx.token, current, { 'if-none-match': before.headers.get('etag') as string });
      expect(live.status).to.equal(200);
      expect(live.body.broadcast.id).to.equal(id);
      expect(live.body.asOf).to.equal(new Date(starts).toISOString());
      expect((await get(server, fx.token, schedule)).body.broadcasts[0].status).to.equal('live');
      clock.set(ends - 1);
      expect((await get(server, fx.token, current)).body.broadcast.id).to.equal(id);
      clock.set(ends);
      expect((await get(server, fx.token, current)).body.broadcast).to.equal(null);
      expect((await get(server, fx.token, schedule)).body.broadcasts[0].status).to.equal('ended');
    });

    it('the default window follows local midnight, across a DST change (a 23-hour day in Europe/Berlin)', async () => {
      const fx = await scheduleFixture(server.url, { timezone: 'Europe/Berlin' });
      // Local dates 2026-04-04 and 2026-04-05, 10:00 CEST: the 8th day after 28 and 29 March.
      const april4 = await putBroadcast(server.url, fx, '2026-04-04T08:00:00Z', '2026-04-04T09:00:00Z');
      const april5 = await putBroadcast(server.url, fx, '2026-04-05T08:00:00Z', '2026-04-05T09:00:00Z');
      const path = `/api/v1/stations/${fx.station.slug}/schedule`;
      const ids = async () => ((await get(server, fx.token, path)).body.broadcasts as Array<{ id: string }>).map((b) => b.id);
      const programs = `/api/v1/stations/${fx.station.slug}/programs`;
      clock.set('2026-03-28T22:59:59.999Z'); // 23:59:59.999 CET on 28 March
      expect(await ids()).to.deep.equal([]);
      expect((await get(server, fx.token, programs)).body.fromDate).to.equal('2026-03-28');
      clock.set('2026-03-28T23:00:00.000Z'); // midnight: 29 March, the day clocks go forward
      expect(await ids()).to.deep.equal([april4]);
      expect((await get(server, fx.token, programs)).body.fromDate).to.equal('2026-03-29');
      clock.set('2026-03-29T21:59:59.999Z'); // 23:59:59.999 CEST, 23 hours later
      expect(await ids()).to.deep.equal([april4]);
      clock.set('2026-03-29T22:00:00.000Z'); // midnight: 30 March (not 23:00Z, a day of 24 hours)
      expect(await ids()).to.deep.equal([april4, april5]);
      expect((await get(server, fx.token, programs)).body.fromDate).to.equal('2026-03-30');
    });
  });

  describe('gates and work', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(async () => server.close());

    it('a 304 never comes before the credential gate: missing, wrong, revoked and other-station credentials are 401 with a cached answer', async () => {
      const { station, token, credentialId } = await listenerFixture(server.url);
      const other = await listenerFixture(server.url);
      const path = `/api/v1/stations/${station.slug}/schedule`;
      const etag = (await get(server, token, path)).headers.get('etag') as string;
      expect((await get(server, token, path, { 'if-none-match': etag })).status).to.equal(304);
      expect((await request(server.url, 'GET', path, { headers: { 'if-none-match': etag } })).status).to.equal(401);
      expect((await get(server, 'x'.repeat(token.length), path, { 'if-none-match': etag })).status).to.equal(401);
      expect((await get(server, other.token, path, { 'if-none-match': etag })).status).to.equal(401);
      expect((await admin(server.url, 'DELETE', `/stations/${station.id}/credentials/${credentialId}`)).status).to.be.oneOf([200, 204]);
      const revoked = await get(server, token, path, { 'if-none-match': etag });
      expect(revoked.status).to.equal(401);
      expect(revoked.body.error.code).to.equal('UNAUTHENTICATED');
    });

    it('a module switched off answers MODULE_DISABLED even with a cached answer and a matching If-None-Match', async () => {
      const { station, token } = await listenerFixture(server.url);
      const path = `/api/v1/stations/${station.slug}/track-history`;
      const etag = (await get(server, token, path)).headers.get('etag') as string;
      await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { trackHistory: false } });
      const res = await get(server, token, path, { 'if-none-match': etag });
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('MODULE_DISABLED');
    });

    it('a 304 and a repeated 200 run no database statement; bad parameters are still 400 (never cached)', async () => {
      const fx = await scheduleFixture(server.url);
      const path = `/api/v1/stations/${fx.station.slug}/programs`;
      const first = await get(server, fx.token, path);
      expect(first.status).to.equal(200);
      const etag = first.headers.get('etag') as string;
      expect(
        await queriesDuring(server, async () => {
          expect((await get(server, fx.token, path, { 'if-none-match': etag })).status).to.equal(304);
          const again = await get(server, fx.token, path);
          expect(again.text).to.equal(first.text);
          expect(again.headers.get('etag')).to.equal(etag);
        }),
      ).to.equal(0);
      for (let i = 0; i < 2; i++) expect((await get(server, fx.token, `${path}?fromDate=tomorrow`)).status).to.equal(400);
    });

    it('GraphQL reuses the cached reads: a repeated now-playing + current broadcast query runs no statement', async () => {
      const fx = await scheduleFixture(server.url);
      const query = '{ nowPlaying { track { title } } currentBroadcast { asOf broadcast { id } } }';
      const first = await gql(server.url, fx.station.slug, fx.token, query);
      expect(first.status, first.text).to.equal(200);
      expect(first.body.errors).to.equal(undefined);
      // The REST read of the same resource is the same cached answer.
      const rest = await get(server, fx.token, `/api/v1/stations/${fx.station.slug}/broadcast/current`);
      expect(rest.body.asOf).to.equal(first.body.data.currentBroadcast.asOf);
      expect(await queriesDuring(server, () => gql(server.url, fx.station.slug, fx.token, query))).to.equal(0);
    });

    /**
     * Call-through spies on the read cache for one station: the first computation of one of its reads is
     * held until `release()` (and then fails like a Postgres out of reach, with `fail`), computations are
     * counted in `runs`, and requests that found a computation running to wait for in `joins`.
     */
    function holdFirstRun(stationId: string, { fail = false } = {}) {
      const reads = server.svc.reads;
      const { read, running } = { read: reads.read, running: reads.running };
      const spy = { runs: 0, joins: 0, release: () => {}, restore: () => {} };
      const held = new Promise<void>((ok) => (spy.release = ok));
      const unreachable = () => Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' });
      reads.read = function (this: typeof reads, ...args: Parameters<typeof read>) {
        if (args[1] !== stationId) return read.apply(this, args);
        if (++spy.runs > 1) return read.apply(this, args);
        const [key, station, area, nowMs, compute] = args;
        return read.call(this, key, station, area, nowMs, (basis) =>
          held.then(() => {
            if (fail) throw unreachable();
            return compute(basis);
          }),
        );
      } as typeof read;
      reads.running = function (this: typeof reads, ...args: Parameters<typeof running>) {
        const found = running.apply(this, args);
        if (found !== undefined && args[1] === stationId) spy.joins++;
        return found;
      } as typeof running;
      spy.restore = () => {
        spy.release();
        reads.read = read;
        reads.running = running;
      };
      return spy;
    }

    /** A station whose credential and station are cached (a first read of another query), so reads may take the path before Koa. */
    async function warmStation() {
      const fx = await scheduleFixture(server.url);
      expect((await gql(server.url, fx.station.slug, fx.token, '{ station { slug } }')).status).to.equal(200);
      return fx;
    }

    const NOW_PLAYING_QUERY = new URLSearchParams({ query: '{ nowPlaying { stationId freshness { status } } }' }).toString();

    it('GraphQL: the same query asked while it runs (as when its answer has just expired) waits for that run, before Koa and in the route, instead of running again', async () => {
      const fx = await warmStation();
      const path = `/api/v1/stations/${fx.station.slug}/graphql?${NOW_PLAYING_QUERY}`;
      const headers = { accept: 'application/json' };
      const spy = holdFirstRun(fx.station.id);
      try {
        const first = get(server, fx.token, path, headers);
        await eventually(() => spy.runs === 1);
        const beforeKoa = get(server, fx.token, path, headers); // GET: answered before Koa (http/cachedReads.ts)
        const inRoute = request(server.url, 'HEAD', path, { token: fx.token, headers }); // HEAD: Koa's (graphql/serve.ts)
        await eventually(() => spy.joins === 2, { timeoutMs: 3000 });
        expect(spy.runs, 'the requests that joined ran nothing').to.equal(1);
        spy.release();
        const [a, b, c] = await Promise.all([first, beforeKoa, inRoute]);
        expect([a.status, b.status, c.status]).to.deep.equal([200, 200, 200]);
        expect(a.body.errors).to.equal(undefined);
        expect(b.text, 'the joined answer is the run answer').to.equal(a.text);
        expect(c.headers.get('content-length')).to.equal(String(Buffer.byteLength(a.text)));
        expect(spy.runs).to.equal(1);
      } finally {
        spy.restore();
      }
    });

    it('GraphQL: requests that waited for a run that found Postgres out of reach answer its 503 (with Retry-After) as it is, at once, instead of waiting for a run of their own', async () => {
      const fx = await warmStation();
      const path = `/api/v1/stations/${fx.station.slug}/graphql?${NOW_PLAYING_QUERY}`;
      const headers = { accept: 'application/json' };
      const spy = holdFirstRun(fx.station.id, { fail: true });
      try {
        const first = get(server, fx.token, path, headers);
        await eventually(() => spy.runs === 1);
        const beforeKoa = get(server, fx.token, path, headers);
        const inRoute = request(server.url, 'HEAD', path, { token: fx.token, headers });
        await eventually(() => spy.joins === 2, { timeoutMs: 3000 });
        spy.release();
        const [a, b, c] = await Promise.all([first, beforeKoa, inRoute]);
        expect([a.status, b.status, c.status], a.text).to.deep.equal([503, 503, 503]);
        expect(a.body.errors[0].extensions.code).to.equal('PROVIDER_UNAVAILABLE');
        expect(b.text).to.equal(a.text);
        for (const reply of [a, b, c]) expect(reply.headers.get('retry-after')).to.equal('2');
        expect(b.headers.get('x-request-id'), 'its own request id').to.not.equal(a.headers.get('x-request-id'));
        expect(spy.runs, 'no request ran the query again').to.equal(1);
      } finally {
        spy.restore();
      }
      // Postgres back: the query runs again (an error answer is never kept).
      const after = await get(server, fx.token, path, headers);
      expect(after.status).to.equal(200);
      expect(after.body.data.nowPlaying.stationId).to.equal(fx.station.id);
    });

    it('a REST read that waited before Koa for a computation that found Postgres out of reach answers 503 with Retry-After at once, without a computation of its own', async () => {
      const fx = await warmStation();
      const path = `/api/v1/stations/${fx.station.slug}/now-playing`;
      const spy = holdFirstRun(fx.station.id, { fail: true });
      try {
        const first = get(server, fx.token, path);
        await eventually(() => spy.runs === 1);
        const waiting = get(server, fx.token, path);
        await eventually(() => spy.joins === 1, { timeoutMs: 3000 });
        spy.release();
        const [a, b] = await Promise.all([first, waiting]);
        for (const reply of [a, b]) {
          expect(reply.status, reply.text).to.equal(503);
          expect(reply.body.error.code).to.equal('PROVIDER_UNAVAILABLE');
          expect(reply.body.error.requestId).to.equal(reply.headers.get('x-request-id'));
          expect(reply.headers.get('retry-after')).to.equal('2');
        }
        expect(spy.runs, 'the waiting read computed nothing').to.equal(1);
      } finally {
        spy.restore();
      }
      expect((await get(server, fx.token, path)).status).to.equal(200);
    });

    it('GraphQL: a kept response follows writes (ingest, schedule edit), and queries touching uncached fields are computed each time', async () => {
      const fx = await scheduleFixture(server.url, { rundownFollowing: false });
      const { token: ingestToken } = await createToken(server.url, fx.station.id, ['ingest:write']);
      const query = '{ nowPlaying { track { title } } currentBroadcast { broadcast { title } } }';
      const ask = async (q = query) => (await gql(server.url, fx.station.slug, fx.token, q)).body;
      expect((await ask()).data).to.deep.equal({ nowPlaying: { track: null }, currentBroadcast: { broadcast: null } });
      await ingest(server.url, fx.station, ingestToken, { artist: 'A', title: 'Fresh' });
      expect((await ask()).data.nowPlaying.track.title).to.equal('Fresh');
      await putBroadcast(server.url, fx, new Date(Date.now() - 60_000).toISOString(), new Date(Date.now() + 3_600_000).toISOString(), {
        title: 'On now',
      });
      expect((await ask()).data.currentBroadcast.broadcast.title).to.equal('On now');
      const history = '{ trackHistory { items { title } } }';
      expect((await ask(history)).data.trackHistory.items.map((i: { title: string }) => i.title)).to.deep.equal(['Fresh']);
      await ingest(server.url, fx.station, ingestToken, { artist: 'B', title: 'Next' });
      expect((await ask(history)).data.trackHistory.items.map((i: { title: string }) => i.title)).to.deep.equal(['Next', 'Fresh']);
      const broken = '{ schedule(fromDate: "2026-02-30") { truncated } }';
      expect((await ask(broken)).errors[0].extensions.code).to.equal('VALIDATION_ERROR');
      expect((await ask(broken)).errors[0].extensions.code, 'an error answer is never kept').to.equal('VALIDATION_ERROR');
    });
  });

  describe('GraphQL content', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(async () => server.close());

    it('content fields read the cached answers REST reads and follow publishes; the preview mutation (drafts) is never kept', async () => {
      const { station, token } = await listenerFixture(server.url);
      await putType(server.url, station.id, 'news');
      const id = await published(server.url, station.id, 'news', { title: 'One', slug: 'one' });
      const rest = await get(server, token, `/api/v1/stations/${station.slug}/content/${id}`);
      const query = `{ contentRecord(id: "${id}") { values } contentBySlug(type: "news", slug: "one") { id } content(type: "news", limit: 5) { records { id } } schemas { key } }`;
      const first = await gql(server.url, station.slug, token, query);
      expect(first.body.errors, first.text).to.equal(undefined);
      expect(first.body.data.contentRecord.values).to.deep.equal(rest.body.values);
      expect(await queriesDuring(server, () => gql(server.url, station.slug, token, query))).to.equal(0);
      const second = await published(server.url, station.id, 'news', { title: 'Two' });
      const after = await gql(server.url, station.slug, token, query);
      expect(after.body.data.content.records.map((r: { id: string }) => r.id)).to.have.members([id, second]);
      await admin(server.url, 'PUT', `/stations/${station.id}/records/${id}`, { type: 'news', values: { title: 'Draft A' } });
      const grant = (await admin(server.url, 'POST', `/stations/${station.id}/preview-grants`, { recordId: id })).body.grant as string;
      const preview = () =>
        gql(
          server.url,
          station.slug,
          token,
          'mutation($input: PreviewInput) { previewEditorial(input: $input) { values } }',
          { input: { stationId: station.id, recordId: id } },
          { 'x-preview-grant': grant },
        );
      expect((await preview()).body.data.previewEditorial.values.title).to.equal('Draft A');
      // A draft save invalidates no listener read: a kept preview would still say Draft A.
      await admin(server.url, 'PUT', `/stations/${station.id}/records/${id}`, { type: 'news', values: { title: 'Draft B' } });
      expect((await preview()).body.data.previewEditorial.values.title).to.equal('Draft B');
    });
  });

  describe('memory bound', () => {
    const BUDGET = 64 * 1024;
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ env: { READ_CACHE_MAX_BYTES: String(BUDGET) } });
    });
    after(async () => server.close());

    it('keeps the held bytes within READ_CACHE_MAX_BYTES while serving correct answers beyond it', async () => {
      const { station, token } = await listenerFixture(server.url);
      await putType(server.url, station.id, 'news');
      const ids: string[] = [];
      const summary = 'x'.repeat(1500);
      for (let i = 0; i < 60; i++) ids.push(await published(server.url, station.id, 'news', { title: `Record ${i}`, summary }));
      for (const [i, id] of ids.entries()) {
        const res = await get(server, token, `/api/v1/stations/${station.slug}/content/${id}`);
        expect(res.body.values.title).to.equal(`Record ${i}`);
        expect(server.svc.reads.usedBytes).to.be.at.most(BUDGET);
      }
      expect(server.svc.reads.size, 'it keeps some').to.be.greaterThan(10);
      expect(server.svc.reads.size, 'not all of them').to.be.lessThan(ids.length);
      // The first ones were evicted, and answer from the database again, the same.
      expect((await get(server, token, `/api/v1/stations/${station.slug}/content/${ids[0]}`)).body.values.title).to.equal('Record 0');
    });
  });
});
