import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startS3, type TestS3 } from '../../support/s3.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { createStation } from '../../support/factories.ts';
import { fetchMedia, mediaPath, publishWithMedia, uploaded } from './helpers.ts';
import { feedPath, podcastStation, publishEpisode, uploadAudio } from '../podcasts/helpers.ts';

// MEDIA_PUBLIC_BASE_URL (docs/media.md, "Behind a CDN"): published media answer 302 to the object's URL
// there with the same ETag (304 when it matches), podcast enclosures point there, and the publication
// rule holds. Files the CDN cannot serve (the postgres store) are sent as before.

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const CDN = 'https://cdn.radio.example/media';

describe('media behind a CDN (MEDIA_PUBLIC_BASE_URL)', function () {
  this.timeout(60_000);
  let s3: TestS3;
  let dir: string;
  before(async () => {
    s3 = await startS3('cdn-tests');
    dir = await mkdtemp(join(tmpdir(), 'waveline-cdn-'));
  });
  after(async () => {
    await s3.close();
    await rm(dir, { recursive: true, force: true });
  });

  const cases = {
    filesystem: () => ({ env: { MEDIA_DIR: dir, MEDIA_S3_BUCKET: '' }, prefix: '' }),
    s3: () => ({ env: { MEDIA_DIR: '', ...s3.env, MEDIA_S3_PREFIX: 'radio' }, prefix: 'radio/' }),
  };

  for (const [name, setUp] of Object.entries(cases)) {
    describe(name, () => {
      let server: TestServer;
      let prefix: string;
      before(async () => {
        const chosen = setUp();
        prefix = chosen.prefix;
        server = await startTestServer({ env: { ...chosen.env, MEDIA_PUBLIC_BASE_URL: CDN } });
      });
      after(() => server.close());

      it('a published file answers 302 to its public URL with the same ETag; 304 when it matches; unpublished stays 404', async () => {
        const station = await createStation(server.url);
        const bytes = randomBytes(5000);
        const media = await uploaded(server.url, station.id, bytes, 'audio/mpeg');
        const path = mediaPath(station.id, media.versionId);
        expect((await fetchMedia(server.url, path)).status, 'not published').to.equal(404);
        await publishWithMedia(server.url, station.id, [media.versionId]);
        const key = (await server.svc.db('media_files').where({ version_id: media.versionId, variant: 'original' }).first()).object_key;
        for (const method of ['GET', 'HEAD']) {
          const res = await fetch(server.url + path, { method, redirect: 'manual' });
          expect(res.status, method).to.equal(302);
          expect(res.headers.get('location')).to.equal(`${CDN}/${prefix}${key}`);
          expect(res.headers.get('etag')).to.equal(`"${sha(bytes)}"`);
        }
        const ranged = await fetch(server.url + path, { headers: { range: 'bytes=0-1' }, redirect: 'manual' });
        expect(ranged.status, 'the CDN answers the range').to.equal(302);
        expect((await fetchMedia(server.url, path, { headers: { 'if-none-match': `"${sha(bytes)}"` } })).status).to.equal(304);
        if (name === 's3') {
          // The public URL names the object the bucket holds.
          expect(await s3.keys()).to.include(`${prefix}${key}`);
        }
      });

      it('podcast enclosures point at the public URL', async () => {
        const { station } = await podcastStation(server.url);
        const audio = await uploadAudio(server.url, station.id);
        await publishEpisode(server.url, station.id, { title: 'One', audio: audio.versionId });
        const key = (await server.svc.db('media_files').where({ version_id: audio.versionId, variant: 'original' }).first()).object_key;
        const xml = await (await fetch(server.url + feedPath(station.slug))).text();
        expect(xml).to.include(`<enclosure url="${CDN}/${prefix}${key}" length="${audio.size}" type="audio/wav"/>`);
      });
    });
  }

  it('postgres store: files are sent as before (no public URL)', async () => {
    const server = await startTestServer({ env: { MEDIA_DIR: '', MEDIA_S3_BUCKET: '', MEDIA_PUBLIC_BASE_URL: CDN } });
    try {
      const station = await createStation(server.url);
      const bytes = randomBytes(3000);
      const media = await uploaded(server.url, station.id, bytes, 'audio/mpeg');
      await publishWithMedia(server.url, station.id, [media.versionId]);
      const res = await fetchMedia(server.url, mediaPath(station.id, media.versionId));
      expect(res.status).to.equal(200);
      expect(sha(res.bytes)).to.equal(sha(bytes));
    } finally {
      await server.close();
    }
  });
});
