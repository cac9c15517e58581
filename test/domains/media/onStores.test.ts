import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import http from 'node:http';
import { expect } from 'chai';
import { ADMIN_TOKEN } from '../../support/env.ts';
import { createStation } from '../../support/factories.ts';
import { STORE_NAMES, useEachStore } from '../../support/s3.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { fetchMedia, mediaPath, publishWithMedia, upload, uploaded } from './helpers.ts';

// Uploads and delivery on each store (docs/media.md, "Stores"): the bytes stream to the store, the
// 201 comes once they are durable with their SHA-256, and a cut, refused or failed upload leaves
// nothing behind — no object, no row, no temporary file. Ranges are read from the store.

const MiB = 1024 * 1024;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Sends the headers and `sent` bytes of a body declared `declared` long, then cuts the connection. */
function cutUpload(url: string, stationId: string, declared: number, sent: number): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(`${url}/admin/v1/stations/${stationId}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'audio/mpeg', 'content-length': String(declared) },
    });
    req.on('error', () => resolve());
    req.on('response', (res) => {
      res.resume();
      resolve();
    });
    req.write(randomBytes(sent), () => setTimeout(() => req.destroy(), 200));
  });
}

/** A body without Content-Length (chunked): refused at the first byte past the limit. */
function chunkedUpload(url: string, stationId: string, bytes: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/admin/v1/stations/${stationId}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/octet-stream' },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.end(bytes);
  });
}

async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

describe('media on each store: streamed uploads and delivery', function () {
  this.timeout(120_000);
  const stores = useEachStore('uploads-on-stores');

  for (const name of STORE_NAMES) {
    describe(name, () => {
      let server: TestServer;
      const objects = async () => {
        const store = await server.svc.media.get(server.svc.media.currentName);
        const keys: string[] = [];
        for await (const { key } of store.list()) keys.push(key);
        return keys.sort();
      };
      before(async () => {
        server = await startTestServer({ env: stores.env(name) });
        expect(server.svc.media.currentName).to.equal(name);
      });
      after(() => server.close());

      it('stores an episode past one part in the store, names it in the row, and serves ranges from it', async () => {
        const station = await createStation(server.url);
        const bytes = randomBytes(12 * MiB + 3);
        const media = await uploaded(server.url, station.id, bytes, 'audio/mpeg');
        const row = await server.svc.db('media_files').where({ version_id: media.versionId, variant: 'original' }).first();
        expect(row).to.include({ store: name, bytes: null, size: bytes.length, etag: `"${sha(bytes)}"` });
        expect(row.object_key).to.match(new RegExp(`^${media.versionId}/original-[0-9a-f]{12}\\.mp3$`));
        expect(await objects()).to.include(row.object_key);
        await publishWithMedia(server.url, station.id, [media.versionId]);
        const path = mediaPath(station.id, media.versionId);
        const whole = await fetchMedia(server.url, path);
        expect(whole.status).to.equal(200);
        expect(sha(whole.bytes)).to.equal(sha(bytes));
        for (const [range, start, end] of [
          ['bytes=0-1', 0, 1],
          ['bytes=8388600-8388615', 8388600, 8388615],
          [`bytes=-10`, bytes.length - 10, bytes.length - 1],
        ] as const) {
          const part = await fetchMedia(server.url, path, { headers: { range } });
          expect(part.status, range).to.equal(206);
          expect(part.headers.get('content-range')).to.equal(`bytes ${start}-${end}/${bytes.length}`);
          expect(Buffer.compare(part.bytes, bytes.subarray(start, end + 1)), range).to.equal(0);
        }
        const head = await fetchMedia(server.url, path, { method: 'HEAD' });
        expect(head.headers.get('content-length')).to.equal(String(bytes.length));
        expect((await fetchMedia(server.url, path, { headers: { 'if-none-match': `"${sha(bytes)}"` } })).status).to.equal(304);
      });

      it('a cut upload leaves nothing: no object, no row, no temporary file', async () => {
        const station = await createStation(server.url);
        const before = await objects();
        await cutUpload(server.url, station.id, 30 * MiB, 10 * MiB);
        const partial = async () => (await readdir(stores.dir, { recursive: true })).filter((f) => f.endsWith('.partial'));
        await until(async () => (await objects()).length === before.length && (name !== 'filesystem' || (await partial()).length === 0));
        expect(await objects()).to.deep.equal(before);
        expect(await server.svc.db('media_versions').where({ station_id: station.id }).count('* as n').first()).to.deep.equal({ n: 0 });
        if (name === 'filesystem') expect(await partial()).to.deep.equal([]);
      });

      it('a refused upload (413 while streaming, and a bad image) leaves nothing', async () => {
        const station = await createStation(server.url);
        const before = await objects();
        expect(await chunkedUpload(server.url, station.id, randomBytes(50 * MiB + 1))).to.equal(413);
        const bad = await upload(server.url, station.id, randomBytes(2000), 'image/png');
        expect(bad.status).to.equal(400);
        await until(async () => (await objects()).length === before.length);
        expect(await server.svc.db('media_versions').where({ station_id: station.id }).count('* as n').first()).to.deep.equal({ n: 0 });
      });
    });
  }

  it('s3 stopped mid-upload: 503 PROVIDER_UNAVAILABLE with Retry-After, and nothing half-stored', async () => {
    const server = await startTestServer({ env: stores.env('s3') });
    try {
      const station = await createStation(server.url);
      const before = await stores.s3.keys();
      const answer = new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
        const req = http.request(`${server.url}/admin/v1/stations/${station.id}/media`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'audio/mpeg', 'content-length': String(40 * MiB) },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body }));
        });
        (async () => {
          for (let sent = 0; sent < 40 * MiB && !req.destroyed; sent += MiB) {
            if (sent === 20 * MiB) await stores.s3.stop();
            if (!req.write(randomBytes(MiB))) await new Promise((ok) => req.once('drain', ok));
          }
          req.end();
        })().catch(() => undefined);
      });
      const res = await answer;
      expect(res.status, res.body).to.equal(503);
      expect(JSON.parse(res.body).error.code).to.equal('PROVIDER_UNAVAILABLE');
      expect(Number(res.retryAfter)).to.be.greaterThan(0);
      await stores.s3.start();
      expect(await stores.s3.keys()).to.deep.equal(before);
      expect(await server.svc.db('media_versions').where({ station_id: station.id }).count('* as n').first()).to.deep.equal({ n: 0 });
    } finally {
      await stores.s3.start().catch(() => undefined);
      await server.close();
    }
  });
});
