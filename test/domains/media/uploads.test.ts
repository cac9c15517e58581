import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { createStation, type TestStation } from '../../support/factories.ts';
import { STORE_NAMES, useEachStore } from '../../support/s3.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { png, wav } from './helpers.ts';

// Pre-signed uploads (docs/media.md, "Large uploads from a browser or a CMS") on each store: S3 signs
// the PUT URL; postgres and filesystem get a Waveline URL carrying a capability. The completion checks
// size, type and SHA-256; what does not match is 400 naming it, and nothing is kept.

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('pre-signed media uploads POST …/media/uploads and …/uploads/{id}/complete', function () {
  this.timeout(60_000);
  const stores = useEachStore('presigned-tests');

  for (const name of STORE_NAMES) {
    describe(name, () => {
      let server: TestServer;
      let station: TestStation;
      before(async () => {
        server = await startTestServer({ env: { ...stores.env(name), PUBLIC_BASE_URL: 'http://placeholder.invalid' } });
        // Waveline upload URLs are absolute (PUBLIC_BASE_URL): the test sends them to the test server.
        station = await createStation(server.url);
      });
      after(() => server.close());

      const announce = (body: Record<string, unknown>, stationId = station.id) =>
        admin(server.url, 'POST', `/stations/${stationId}/media/uploads`, body);
      const complete = (uploadId: string, stationId = station.id) =>
        admin(server.url, 'POST', `/stations/${stationId}/media/uploads/${uploadId}/complete`, {});
      const send = async (grant: { url: string; headers: Record<string, string> }, bytes: Buffer) => {
        const url = grant.url.replace('http://placeholder.invalid', server.url);
        return fetch(url, { method: 'PUT', headers: grant.headers, body: bytes });
      };
      const versions = async () =>
        Number((await server.svc.db('media_versions').where({ station_id: station.id }).count('* as n').first())?.n);
      const objectOf = async (uploadId: string) => {
        const row = await server.svc.db('media_uploads').where({ id: uploadId }).first();
        return row ? (await server.svc.media.get(row.store)).head(row.object_key) : null;
      };

      it('announces, takes the bytes by PUT, and completes with the direct upload’s answer; a second completion answers the same', async () => {
        const bytes = wav(2.5);
        const before = await versions();
        const res = await announce({ mime: 'audio/wav', bytes: bytes.length, sha256: sha(bytes), alt: 'Episode 1' });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body).to.have.keys('uploadId', 'url', 'method', 'headers', 'expiresAt');
        expect(res.body.method).to.equal('PUT');
        expect(res.body.headers).to.deep.equal({ 'content-type': 'audio/wav' });
        const ttl = Date.parse(res.body.expiresAt) - Date.now();
        expect(ttl).to.be.within(3590_000, 3600_000);
        if (name === 's3') expect(res.body.url.startsWith(`${stores.s3.endpoint}/${stores.s3.bucket}/`)).to.equal(true);
        else expect(res.body.url).to.match(/^http:\/\/placeholder\.invalid\/api\/media\/uploads\/[0-9a-f-]{36}\?token=/);
        const put = await send(res.body, bytes);
        expect(put.status).to.be.within(200, 299);
        const done = await complete(res.body.uploadId);
        expect(done.status, JSON.stringify(done.body)).to.equal(201);
        expect(done.body).to.include({ kind: 'audio', mime: 'audio/wav', duration: 2.5 });
        const again = await complete(res.body.uploadId);
        expect(again.status).to.equal(201);
        expect(again.body).to.deep.equal(done.body);
        expect(await versions()).to.equal(before + 1);
        const version = await server.svc.db('media_versions').where({ id: done.body.versionId }).first();
        expect(version).to.include({ sha256: sha(bytes), size: bytes.length, alt: 'Episode 1' });
      });

      it('a size that does not match is 400 naming bytes, and nothing is kept', async () => {
        const bytes = wav(1);
        const res = await announce({ mime: 'audio/wav', bytes: bytes.length + 10 });
        await send(res.body, bytes);
        const done = await complete(res.body.uploadId);
        expect(done.status).to.equal(400);
        expect(done.body.error.code).to.equal('VALIDATION_ERROR');
        expect(done.body.error.issues.map((i: { path: string }) => i.path)).to.deep.equal(['bytes']);
        expect(await objectOf(res.body.uploadId)).to.equal(null);
        expect((await complete(res.body.uploadId)).status, 'nothing left to complete').to.equal(404);
      });

      it('bytes that are not the announced type are 400 naming mime; a wrong digest 400 naming sha256; nothing is kept', async () => {
        const junk = randomBytes(3000);
        const asPng = await announce({ mime: 'image/png', bytes: junk.length });
        await send(asPng.body, junk);
        const notPng = await complete(asPng.body.uploadId);
        expect(notPng.status).to.equal(400);
        expect(notPng.body.error.issues[0].path).to.equal('mime');
        const picture = await png(30, 20);
        const wrongDigest = await announce({ mime: 'image/png', bytes: picture.length, sha256: sha(junk) });
        await send(wrongDigest.body, picture);
        const digest = await complete(wrongDigest.body.uploadId);
        expect(digest.status).to.equal(400);
        expect(digest.body.error.issues[0].path).to.equal('sha256');
        const before = await versions();
        expect(await objectOf(asPng.body.uploadId)).to.equal(null);
        expect(await versions()).to.equal(before);
      });

      it('completing before any byte arrived is 400 naming bytes', async () => {
        const res = await announce({ mime: 'audio/mpeg', bytes: 1000 });
        const done = await complete(res.body.uploadId);
        expect(done.status).to.equal(400);
        expect(done.body.error.issues[0].path).to.equal('bytes');
      });

      it('an unknown, expired or another station’s upload is 404', async () => {
        expect((await complete(randomUUID())).status).to.equal(404);
        const other = await createStation(server.url);
        const res = await announce({ mime: 'audio/mpeg', bytes: 10 });
        expect((await complete(res.body.uploadId, other.id)).status).to.equal(404);
        await server.svc
          .db('media_uploads')
          .where({ id: res.body.uploadId })
          .update({ expires_at: new Date(Date.now() - 1000) });
        expect((await complete(res.body.uploadId)).status).to.equal(404);
        if (name !== 's3') expect((await send(res.body, randomBytes(10))).status, 'the URL expired too').to.equal(404);
      });

      it('an announced size over the type’s limit is 413; an unknown asset 404', async () => {
        expect((await announce({ mime: 'image/png', bytes: 50 * 1024 * 1024 + 1 })).status).to.equal(413);
        expect((await announce({ mime: 'audio/mpeg', bytes: 1024 * 1024 * 1024 + 1 })).status).to.equal(413);
        expect((await announce({ mime: 'audio/mpeg', bytes: 60 * 1024 * 1024 })).status).to.equal(201);
        expect((await announce({ mime: 'audio/mpeg', bytes: 10, assetId: randomUUID() })).status).to.equal(404);
      });

      if (name !== 's3')
        it('the Waveline URL is a capability: a wrong token is 404, more bytes than announced 413', async () => {
          const res = await announce({ mime: 'audio/mpeg', bytes: 100 });
          const wrong = res.body.url.replace(/token=.*/, 'token=' + 'x'.repeat(32));
          expect((await send({ ...res.body, url: wrong }, randomBytes(100))).status).to.equal(404);
          expect((await send(res.body, randomBytes(101))).status).to.equal(413);
        });
    });
  }
});
