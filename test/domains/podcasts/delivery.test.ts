import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { buildApp } from '../../../src/http/app.ts';
import { allRoutes } from '../../../src/routes.ts';
import { admin } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { requiresRedis } from '../../support/mode.ts';
import { sharedServer, startTestServer, type TestServer } from '../../support/server.ts';
import { fetchMedia } from '../media/helpers.ts';
import {
  cover,
  feedPath,
  fetchFeed,
  get,
  patchPodcasts,
  podcastStation,
  publishEpisode,
  putProgram,
  setting,
  uploadAudio,
} from './helpers.ts';
import { uploaded } from '../media/helpers.ts';

// docs/podcasts.md#the-feeds: the cover at /podcasts/{slug}/artwork.{jpg|png} (anonymous, strong ETag, the
// media rules for ranges and HEAD) while podcasts are on; feeds served from cached bytes before Koa; and
// rebuilt in a second web process once a change crossed the invalidation bus.

describe('podcast delivery', () => {
  describe('the cover', () => {
    let server: TestServer;
    before(async () => {
      server = await sharedServer();
    });

    it('served at the extension of its type while podcasts are on, though no record references it: ETag, 304, HEAD, ranges', async () => {
      const { station } = await podcastStation(server.url);
      const path = `/podcasts/${station.slug}/artwork.png`;
      const bytes = await fetchMedia(server.url, path);
      expect(bytes.status).to.equal(200);
      expect(bytes.headers.get('content-type')).to.equal('image/png');
      expect(bytes.headers.get('cache-control')).to.equal('public, max-age=300');
      const etag = bytes.headers.get('etag')!;
      expect(etag).to.match(/^"[0-9a-f]{64}"$/);
      expect((await fetchMedia(server.url, path, { headers: { 'if-none-match': etag } })).status).to.equal(304);
      const head = await fetchMedia(server.url, path, { method: 'HEAD' });
      expect(head.status).to.equal(200);
      expect(head.headers.get('content-length')).to.equal(String(bytes.bytes.length));
      const range = await fetchMedia(server.url, path, { headers: { range: 'bytes=0-1' } });
      expect(range.status).to.equal(206);
      expect(range.bytes.equals(bytes.bytes.subarray(0, 2))).to.equal(true);
      expect((await fetchMedia(server.url, `/podcasts/${station.slug}/artwork.jpg`)).status, 'the other extension').to.equal(404);
      // Not public as media: no published record references it.
      const versionId = station.id && (await admin(server.url, 'GET', `/stations/${station.id}`)).body.podcasts.imageVersionId;
      expect((await fetchMedia(server.url, `/api/media/public/${station.id}/${versionId}`)).status).to.equal(404);

      const jpeg = (await uploaded(server.url, station.id, await cover(1500, 1500, 'jpeg'), 'image/jpeg')).versionId;
      expect((await patchPodcasts(server.url, station.id, setting(jpeg))).status).to.equal(200);
      expect((await fetchMedia(server.url, `/podcasts/${station.slug}/artwork.jpg`)).status).to.equal(200);
      expect((await fetchMedia(server.url, path)).status).to.equal(404);
      expect((await fetchFeed(server.url, feedPath(station.slug))).feed.itunesImage).to.match(/\/artwork\.jpg$/);
    });
  });

  describe('feeds from cached bytes, before Koa', () => {
    let server: TestServer;
    let http: Server;
    let url: string;
    let koaRequests = 0;
    before(async () => {
      server = await startTestServer({ env: { RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0' } });
      const app = buildApp(server.svc, allRoutes);
      const createContext = app.koa.createContext.bind(app.koa);
      app.koa.createContext = ((req: IncomingMessage, res: ServerResponse) => {
        koaRequests++;
        return createContext(req, res);
      }) as typeof app.koa.createContext;
      http = createServer(app.handle);
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    });
    after(async () => {
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await server.close();
    });

    it('a repeated feed (station and program) and its 304 are answered without Koa, same bytes and headers; off goes to Koa (404)', async () => {
      const { station, imageVersionId } = await podcastStation(server.url);
      const program = await putProgram(server.url, station.id);
      for (const path of [feedPath(station.slug), feedPath(station.slug, program)]) {
        const first = await get(url, path);
        expect(first.status).to.equal(200);
        const before = koaRequests;
        const second = await get(url, path);
        const revalidated = await get(url, path, { 'if-none-match': first.headers.etag as string });
        expect(koaRequests, 'answered before Koa').to.equal(before);
        expect(second.text).to.equal(first.text);
        for (const name of ['etag', 'content-type', 'cache-control', 'content-length'])
          expect(second.headers[name], name).to.equal(first.headers[name]);
        expect(revalidated.status).to.equal(304);
      }
      expect((await patchPodcasts(server.url, station.id, setting(imageVersionId, { enabled: false }))).status).to.equal(200);
      const before = koaRequests;
      expect((await get(url, feedPath(station.slug))).status).to.equal(404);
      expect(koaRequests).to.equal(before + 1);
    });
  });

  describe('two web processes sharing Redis', () => {
    let a: TestServer;
    let b: TestServer;
    before(async function () {
      requiresRedis(this, 'two web processes share the invalidation bus through Redis');
      a = await startTestServer();
      b = await startTestServer();
    });
    after(async () => {
      await a?.close();
      await b?.close();
    });

    it('a change made through one process shows in the other’s feed within 5 s: publish, edit, program, setting, station, unpublish', async () => {
      const { station, imageVersionId } = await podcastStation(a.url);
      const program = await putProgram(a.url, station.id, { title: 'Show' });
      const audio = await uploadAudio(a.url, station.id);
      const stationPath = feedPath(station.slug);
      const programPath = feedPath(station.slug, program);
      const seen = async (path: string, check: (text: string) => boolean) => {
        await eventually(async () => check((await get(b.url, path)).text), { timeoutMs: 5000 });
      };
      expect((await fetchFeed(b.url, stationPath)).feed.items).to.have.length(0);
      expect((await fetchFeed(b.url, programPath)).feed.items).to.have.length(0);
      expect((await get(b.url, stationPath)).status, 'now kept by B').to.equal(200);

      const id = await publishEpisode(a.url, station.id, { title: 'Fresh', audio: audio.versionId }, { programIds: [program] });
      await seen(stationPath, (t) => t.includes('<title>Fresh</title>'));
      await seen(programPath, (t) => t.includes('<title>Fresh</title>'));
      await publishEpisode(a.url, station.id, { title: 'Edited', audio: audio.versionId }, { id, programIds: [program] });
      await seen(stationPath, (t) => t.includes('<title>Edited</title>'));
      await putProgram(a.url, station.id, { title: 'Renamed show' }, program);
      await seen(programPath, (t) => t.includes('Renamed show'));
      expect((await patchPodcasts(a.url, station.id, setting(imageVersionId, { author: 'Someone else' }))).status).to.equal(200);
      await seen(stationPath, (t) => t.includes('<itunes:author>Someone else</itunes:author>'));
      expect((await admin(a.url, 'PATCH', `/stations/${station.id}`, { name: 'Other name FM' })).status).to.equal(200);
      await seen(stationPath, (t) => t.includes('<title>Other name FM</title>'));
      expect((await admin(a.url, 'POST', `/stations/${station.id}/records/${id}/unpublish`)).status).to.equal(200);
      await seen(stationPath, (t) => !t.includes('<item>'));
      await seen(programPath, (t) => !t.includes('<item>'));
      // lastBuildDate is the last change, not the build time: both processes build the same bytes and ETag.
      for (const path of [stationPath, programPath]) {
        const [fromA, fromB] = [await get(a.url, path), await get(b.url, path)];
        expect(fromB.headers.etag, path).to.equal(fromA.headers.etag);
        expect((await get(a.url, path, { 'if-none-match': fromB.headers.etag as string })).status).to.equal(304);
      }
    });
  });
});
