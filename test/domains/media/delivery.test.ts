import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sharedServer, startTestServer, type TestServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { createStation, type TestStation } from '../../support/factories.ts';
import { fetchMedia, mediaPath, png, publishWithMedia, unpublish, uploaded, wav } from './helpers.ts';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('published media GET /api/media/public/{stationId}/{versionId}[/{variant}]', () => {
  let server: TestServer;
  let station: TestStation;
  let image: Buffer;
  let imageId: string;
  let path: string;
  before(async () => {
    server = await sharedServer();
    station = await createStation(server.url);
    image = await png(300, 200);
    imageId = (await uploaded(server.url, station.id, image, 'image/png')).versionId;
    await server.svc.jobs.queue('media').remove(imageId); // no worker renders its variants: a request does (variants.test.ts)
    path = mediaPath(station.id, imageId);
    await publishWithMedia(server.url, station.id, [imageId]);
  });

  it('serves the bytes with no credential: 200, Content-Type, Content-Length, strong SHA-256 ETag, Accept-Ranges, Cache-Control private, no-store, CORS', async () => {
    const res = await fetchMedia(server.url, path);
    expect(res.status).to.equal(200);
    expect(Buffer.compare(res.bytes, image)).to.equal(0);
    expect(res.headers.get('content-type')).to.equal('image/png');
    expect(res.headers.get('content-length')).to.equal(String(image.length));
    expect(res.headers.get('etag')).to.equal(`"${sha(image)}"`);
    expect(res.headers.get('accept-ranges')).to.equal('bytes');
    expect(res.headers.get('cache-control')).to.equal('private, no-store');
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('content-security-policy'), 'an SVG opened directly runs no script').to.include('sandbox');
    expect(res.headers.get('x-request-id')).to.be.a('string');
    const withJunkToken = await fetchMedia(server.url, path, { headers: { authorization: 'Bearer nonsense' } });
    expect(withJunkToken.status, 'credentials are not looked at').to.equal(200);
    expect((await fetchMedia(server.url, path.replace(imageId, imageId.toUpperCase()))).status).to.equal(200);
  });

  it('every answer of the media path is private, no-store: its errors (400, 404, 416, unknown paths) too', async () => {
    const answers = {
      'unknown version (404)': await fetchMedia(server.url, mediaPath(station.id, randomUUID())),
      'malformed version id (400)': await fetchMedia(server.url, mediaPath(station.id, 'not-a-uuid')),
      'unknown variant': await fetchMedia(server.url, `${path}/poster`),
      'unknown station (404)': await fetchMedia(server.url, mediaPath(randomUUID(), imageId)),
      'unsatisfiable range (416)': await fetchMedia(server.url, path, { headers: { range: `bytes=${image.length}-` } }),
      'a path no route takes': await fetchMedia(server.url, `${path}/thumb/extra`),
    };
    for (const [name, res] of Object.entries(answers)) {
      expect(res.status, name).to.be.within(400, 499);
      expect(res.headers.get('cache-control'), name).to.equal('private, no-store');
      expect(res.json().error.code, name).to.be.a('string');
    }
  });

  it('is public exactly while a currently published record references the version', async () => {
    const own = await createStation(server.url);
    const media = await uploaded(server.url, own.id, await png(20, 20), 'image/png');
    const p = mediaPath(own.id, media.versionId);
    expect((await fetchMedia(server.url, p)).status, 'uploaded, not referenced').to.equal(404);
    const draft = randomUUID();
    await admin(server.url, 'PUT', `/stations/${own.id}/content-types/story`, {
      label: 'Story',
      fields: [{ key: 'title', label: 'Title', kind: 'text' }],
    });
    await admin(server.url, 'PUT', `/stations/${own.id}/records/${draft}`, {
      type: 'story',
      values: { title: 'Draft' },
      media: [{ versionId: media.versionId }],
    });
    expect((await fetchMedia(server.url, p)).status, 'referenced by a draft only').to.equal(404);
    const first = await publishWithMedia(server.url, own.id, [media.versionId]);
    const second = await publishWithMedia(server.url, own.id, [media.versionId]);
    expect((await fetchMedia(server.url, p)).status).to.equal(200);
    await unpublish(server.url, own.id, first);
    expect((await fetchMedia(server.url, p)).status, 'still referenced by the second record').to.equal(200);
    await admin(server.url, 'PUT', `/stations/${own.id}/records/${second}`, { type: 'story', values: { title: 'No picture now' } });
    await admin(server.url, 'POST', `/stations/${own.id}/records/${second}/publish`, {});
    const gone = await fetchMedia(server.url, p);
    expect(gone.status, 'the published revision no longer references it').to.equal(404);
    expect(gone.json().error).to.include({ code: 'NOT_FOUND' });
    expect(gone.json().error.requestId).to.be.a('string');
    await admin(server.url, 'POST', `/stations/${own.id}/records/${second}/publish`, { revision: 1 });
    expect((await fetchMedia(server.url, p)).status, 'republishing the revision with it').to.equal(200);
    await unpublish(server.url, own.id, second);
    expect((await fetchMedia(server.url, p)).status).to.equal(404);
  });

  it('is 404 for an unknown version, another station in the URL, an unknown station, and a variant that does not exist', async () => {
    expect((await fetchMedia(server.url, mediaPath(station.id, randomUUID()))).status).to.equal(404);
    const other = await createStation(server.url);
    const cross = await fetchMedia(server.url, mediaPath(other.id, imageId));
    expect(cross.status).to.equal(404);
    expect(cross.headers.get('access-control-allow-origin')).to.equal('*');
    expect((await fetchMedia(server.url, mediaPath('st_nosuchstation', imageId))).status).to.equal(404);
    expect((await fetchMedia(server.url, mediaPath(other.id, imageId, 'thumb'))).status, 'a variant through another station').to.equal(404);
    const audio = await uploaded(server.url, station.id, wav(1), 'audio/wav');
    await publishWithMedia(server.url, station.id, [audio.versionId]);
    expect((await fetchMedia(server.url, mediaPath(station.id, audio.versionId))).status).to.equal(200);
    expect((await fetchMedia(server.url, mediaPath(station.id, audio.versionId, 'square'))).status, 'audio has no variants').to.equal(404);
  });

  it('is 404 when the station is inactive or public-offline, and 404 MODULE_DISABLED with the media module off (applies on the next read)', async () => {
    const own = await createStation(server.url);
    const media = await uploaded(server.url, own.id, await png(20, 20), 'image/png');
    await publishWithMedia(server.url, own.id, [media.versionId]);
    const p = mediaPath(own.id, media.versionId);
    expect((await fetchMedia(server.url, p)).status).to.equal(200);
    await admin(server.url, 'PATCH', `/stations/${own.id}`, { publicOnline: false });
    expect((await fetchMedia(server.url, p)).json().error.code).to.equal('NOT_FOUND');
    await admin(server.url, 'PATCH', `/stations/${own.id}`, { publicOnline: true, active: false });
    expect((await fetchMedia(server.url, p)).status).to.equal(404);
    await admin(server.url, 'PATCH', `/stations/${own.id}`, { active: true, modules: { media: false } });
    const off = await fetchMedia(server.url, p);
    expect(off.status).to.equal(404);
    expect(off.json().error.code).to.equal('MODULE_DISABLED');
    await admin(server.url, 'PATCH', `/stations/${own.id}`, { modules: { media: true } });
    expect((await fetchMedia(server.url, p)).status).to.equal(200);
  });

  it('is 400 for a malformed version id and for an unknown variant, with a suggestion', async () => {
    const bad = await fetchMedia(server.url, mediaPath(station.id, 'not-a-uuid'));
    expect(bad.status).to.equal(400);
    expect(bad.json().error.issues[0]).to.include({ path: 'versionId' });
    const typo = await fetchMedia(server.url, mediaPath(station.id, imageId, 'thumbs'));
    expect(typo.status).to.equal(400);
    expect(typo.json().error.issues[0]).to.include({ path: 'variant', code: 'invalid_value', suggestion: 'thumb' });
  });

  describe('single range support', () => {
    const get = (headers: Record<string, string>, method = 'GET') => fetchMedia(server.url, path, { method, headers });

    it('bytes=a-b, a- and -n give 206 with Content-Range and Content-Length of the slice', async () => {
      const size = image.length;
      for (const [range, start, end] of [
        ['bytes=0-99', 0, 99],
        ['bytes=100-', 100, size - 1],
        ['bytes=-50', size - 50, size - 1],
        ['bytes=10-99999999', 10, size - 1],
        ['bytes=-99999999', 0, size - 1],
        ['bytes=5-5', 5, 5],
        ['BYTES = 7-8', 7, 8],
      ] as const) {
        const res = await get({ range });
        expect(res.status, range).to.equal(206);
        expect(res.headers.get('content-range'), range).to.equal(`bytes ${start}-${end}/${size}`);
        expect(res.headers.get('content-length'), range).to.equal(String(end - start + 1));
        expect(Buffer.compare(res.bytes, image.subarray(start, end + 1)), range).to.equal(0);
        expect(res.headers.get('etag')).to.equal(`"${sha(image)}"`);
        expect(res.headers.get('accept-ranges')).to.equal('bytes');
        expect(res.headers.get('cache-control')).to.equal('private, no-store');
      }
    });

    it('an unsatisfiable range is 416 with Content-Range: bytes */size', async () => {
      for (const range of [`bytes=${image.length}-`, `bytes=${image.length + 10}-${image.length + 20}`, 'bytes=-0']) {
        const res = await get({ range });
        expect(res.status, range).to.equal(416);
        expect(res.headers.get('content-range')).to.equal(`bytes */${image.length}`);
        expect(res.json().error.code).to.equal('RANGE_NOT_SATISFIABLE');
      }
    });

    it('several ranges, or a range header that is not a valid byte range, give 200 with the whole body', async () => {
      for (const range of ['bytes=0-1,5-6', 'bytes=0-1, -5', 'bytes=abc', 'items=0-1', 'bytes=9-2', 'bytes=-']) {
        const res = await get({ range });
        expect(res.status, range).to.equal(200);
        expect(res.headers.get('content-range'), range).to.equal(null);
        expect(res.bytes.length, range).to.equal(image.length);
      }
    });

    it('If-Range with the current ETag honours the range; another ETag, a weak one or a date give the whole body', async () => {
      const etag = `"${sha(image)}"`;
      expect((await get({ range: 'bytes=0-9', 'if-range': etag })).status).to.equal(206);
      for (const ifRange of ['"0000"', `W/${etag}`, 'Wed, 21 Oct 2015 07:28:00 GMT']) {
        const res = await get({ range: 'bytes=0-9', 'if-range': ifRange });
        expect(res.status, ifRange).to.equal(200);
        expect(res.bytes.length).to.equal(image.length);
      }
    });

    it('If-None-Match with the ETag (alone, in a list, or *) is 304 with no body, before any range', async () => {
      const etag = `"${sha(image)}"`;
      for (const inm of [etag, `"abc", ${etag}`, '*']) {
        const res = await get({ 'if-none-match': inm, range: 'bytes=0-9' });
        expect(res.status, inm).to.equal(304);
        expect(res.bytes.length).to.equal(0);
        expect(res.headers.get('etag')).to.equal(etag);
        expect(res.headers.get('cache-control')).to.equal('private, no-store');
      }
      expect((await get({ 'if-none-match': '"other"' })).status).to.equal(200);
    });

    it('HEAD answers with the headers of GET and no body', async () => {
      const head = await get({}, 'HEAD');
      expect(head.status).to.equal(200);
      expect(head.bytes.length).to.equal(0);
      expect(head.headers.get('content-length')).to.equal(String(image.length));
      expect(head.headers.get('content-type')).to.equal('image/png');
      expect(head.headers.get('etag')).to.equal(`"${sha(image)}"`);
      expect(head.headers.get('accept-ranges')).to.equal('bytes');
      const partial = await get({ range: 'bytes=0-9' }, 'HEAD');
      expect(partial.status).to.equal(206);
      expect(partial.headers.get('content-length')).to.equal('10');
      expect(partial.headers.get('content-range')).to.equal(`bytes 0-9/${image.length}`);
      expect((await fetchMedia(server.url, mediaPath(station.id, randomUUID()), { method: 'HEAD' })).status).to.equal(404);
    });
  });

  describe('a file larger than one slice (read from Postgres in slices)', () => {
    let big: Buffer;
    let bigPath: string;
    before(async () => {
      big = randomBytes(3 * 1024 * 1024 + 123);
      const media = await uploaded(server.url, station.id, big, 'audio/mpeg');
      await publishWithMedia(server.url, station.id, [media.versionId]);
      bigPath = mediaPath(station.id, media.versionId);
    });

    it('streams the whole file with its Content-Length', async () => {
      const res = await fetchMedia(server.url, bigPath);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-length')).to.equal(String(big.length));
      expect(res.headers.get('content-type')).to.equal('audio/mpeg');
      expect(sha(res.bytes)).to.equal(sha(big));
      expect(res.headers.get('etag')).to.equal(`"${sha(big)}"`);
    });

    it('serves ranges across slice boundaries and at the end', async () => {
      const MiB = 1024 * 1024;
      for (const [range, start, end] of [
        [`bytes=${MiB - 10}-${MiB + 10}`, MiB - 10, MiB + 10],
        [`bytes=${2 * MiB}-`, 2 * MiB, big.length - 1],
        ['bytes=-123', big.length - 123, big.length - 1],
        ['bytes=0-0', 0, 0],
      ] as const) {
        const res = await fetchMedia(server.url, bigPath, { headers: { range } });
        expect(res.status, range).to.equal(206);
        expect(res.headers.get('content-range')).to.equal(`bytes ${start}-${end}/${big.length}`);
        expect(Buffer.compare(res.bytes, big.subarray(start, end + 1)), range).to.equal(0);
      }
      expect((await fetchMedia(server.url, bigPath, { headers: { range: `bytes=${big.length}-` } })).status).to.equal(416);
    });
  });
});

describe('published media rate limit (anonymous, per client IP)', () => {
  it('limits each client IP with RateLimit headers and Retry-After', async () => {
    const server = await startTestServer({ env: { RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3' } });
    try {
      const station = await createStation(server.url);
      const media = await uploaded(server.url, station.id, await png(10, 10), 'image/png');
      await publishWithMedia(server.url, station.id, [media.versionId]);
      const p = mediaPath(station.id, media.versionId);
      const from = (ip: string) => fetchMedia(server.url, p, { headers: { 'x-forwarded-for': ip } });
      for (let i = 0; i < 3; i++) {
        const ok = await from('203.0.113.7');
        expect(ok.status).to.equal(200);
        expect(ok.headers.get('ratelimit-policy')).to.equal('"anonymous";q=3;w=60');
      }
      const limited = await from('203.0.113.7');
      expect(limited.status).to.equal(429);
      expect(limited.json().error.code).to.equal('RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
      expect((await from('203.0.113.8')).status, 'another client has its own bucket').to.equal(200);
    } finally {
      await server.close();
    }
  });
});
