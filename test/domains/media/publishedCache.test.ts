import { expect } from 'chai';
import { sharedServer, startTestServer, type TestServer } from '../../support/server.ts';
import { createStation } from '../../support/factories.ts';
import { fetchMedia, mediaPath, publishWithMedia, unpublish, uploaded, wav } from './helpers.ts';

/** Polls until `check` holds or the deadline passes. */
async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((ok) => setTimeout(ok, 20));
  }
  return check();
}

describe('published media: the publication answer kept in memory (docs/media.md#reading)', () => {
  let server: TestServer;
  let other: TestServer;
  before(async () => {
    server = await sharedServer();
    other = await startTestServer();
  });
  after(async () => {
    await other.close();
  });

  it('range reads of a published episode ask the database whether it is published once, not per request', async () => {
    const station = await createStation(server.url);
    const episode = await uploaded(server.url, station.id, wav(60), 'audio/wav');
    await publishWithMedia(server.url, station.id, [episode.versionId]);
    const path = mediaPath(station.id, episode.versionId);
    const asked: string[] = [];
    const onQuery = (query: { sql: string }) => {
      if (query.sql.includes('published_media')) asked.push(query.sql);
    };
    server.svc.db.on('query', onQuery);
    try {
      for (let i = 0; i < 20; i++) {
        const res = await fetchMedia(server.url, path, { headers: { range: `bytes=${i * 1000}-${i * 1000 + 999}` } });
        expect(res.status).to.equal(206);
        expect(res.bytes.length).to.equal(1000);
      }
    } finally {
      server.svc.db.off('query', onQuery);
    }
    expect(asked.length).to.be.at.most(1);
  });

  it('is 404 on the next request after an unpublish in this process, and moments later (the invalidation bus) after one in another process', async () => {
    const station = await createStation(server.url);
    const episode = await uploaded(server.url, station.id, wav(2), 'audio/wav');
    const record = await publishWithMedia(server.url, station.id, [episode.versionId]);
    const path = mediaPath(station.id, episode.versionId);
    expect((await fetchMedia(server.url, path)).status).to.equal(200);
    expect((await fetchMedia(other.url, path)).status).to.equal(200);
    // Unpublished through the other process: this one hears it on the invalidation bus.
    expect((await unpublish(other.url, station.id, record)).status).to.equal(200);
    expect((await fetchMedia(other.url, path)).status, 'the writing process').to.equal(404);
    expect(await eventually(async () => (await fetchMedia(server.url, path)).status === 404), 'the other process').to.equal(true);
    await publishWithMedia(server.url, station.id, [episode.versionId]);
    expect((await fetchMedia(server.url, path)).status, 'published again').to.equal(200);
  });
});
