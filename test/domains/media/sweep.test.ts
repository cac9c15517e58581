import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { createStation, eventually, type TestStation } from '../../support/factories.ts';
import { STORE_NAMES, useEachStore } from '../../support/s3.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { startWorkers } from '../../../workers/index.ts';
import { SWEEP_GRACE_MS, sweepExpiredUploads } from '../../../src/domains/media/sweep.ts';
import { wav } from './helpers.ts';

// docs/media.md#the-sweep: pre-signed uploads announced and never completed keep neither their bytes nor
// their row once expired (an hour's grace); a completed upload's file stays.

describe('media: the sweep of expired pre-signed uploads (media.sweep)', function () {
  this.timeout(60_000);
  const stores = useEachStore('sweep-tests');

  for (const name of STORE_NAMES) {
    describe(name, () => {
      let server: TestServer;
      let station: TestStation;
      before(async () => {
        server = await startTestServer({ env: { ...stores.env(name), PUBLIC_BASE_URL: 'http://placeholder.invalid' } });
        station = await createStation(server.url);
      });
      after(() => server.close());

      /** Announces an upload and sends its bytes; its id and where the bytes are. */
      async function sent(bytes: Buffer): Promise<{ uploadId: string; store: string; key: string }> {
        const grant = await admin(server.url, 'POST', `/stations/${station.id}/media/uploads`, { mime: 'audio/wav', bytes: bytes.length });
        expect(grant.status, JSON.stringify(grant.body)).to.equal(201);
        const put = await fetch(grant.body.url.replace('http://placeholder.invalid', server.url), {
          method: 'PUT',
          headers: grant.body.headers,
          body: bytes,
        });
        expect(put.status).to.be.within(200, 299);
        const row = await server.svc.db('media_uploads').where({ id: grant.body.uploadId }).first();
        return { uploadId: grant.body.uploadId, store: row.store, key: row.object_key };
      }
      const objectExists = async (upload: { store: string; key: string }) =>
        (await (await server.svc.media.get(upload.store as 'postgres')).head(upload.key)) !== null;
      const expire = (uploadId: string, agoMs: number) =>
        server.svc
          .db('media_uploads')
          .where({ id: uploadId })
          .update({ expires_at: new Date(Date.now() - agoMs) });
      const rowExists = async (uploadId: string) => (await server.svc.db('media_uploads').where({ id: uploadId }).first()) !== undefined;

      it('removes the bytes and row of an upload never completed, an hour after it expired; a completed upload’s file stays', async () => {
        const abandoned = await sent(wav(1));
        const recent = await sent(wav(1));
        const done = await sent(wav(2));
        const completed = await admin(server.url, 'POST', `/stations/${station.id}/media/uploads/${done.uploadId}/complete`, {});
        expect(completed.status).to.equal(201);
        const notYetCompleted = await sent(wav(1));
        await expire(abandoned.uploadId, SWEEP_GRACE_MS + 60_000);
        await expire(done.uploadId, SWEEP_GRACE_MS + 60_000);
        await expire(recent.uploadId, SWEEP_GRACE_MS - 60_000); // expired, within the grace

        const result = await sweepExpiredUploads(server.svc, new Date());
        expect(result.abandoned).to.be.at.least(1);
        expect(await objectExists(abandoned), 'the abandoned upload’s bytes').to.equal(false);
        expect(await rowExists(abandoned.uploadId), 'the abandoned upload’s row').to.equal(false);
        expect(await objectExists(recent), 'within the grace: kept').to.equal(true);
        expect(await rowExists(recent.uploadId)).to.equal(true);
        expect(await objectExists(notYetCompleted), 'not expired: kept').to.equal(true);
        expect(await rowExists(done.uploadId), 'the completed upload’s row').to.equal(false);
        expect(await objectExists(done), 'the completed upload’s file is the version’s').to.equal(true);
        const file = await server.svc.db('media_files').where({ version_id: completed.body.versionId, variant: 'original' }).first();
        expect(file.object_key).to.equal(done.key);
      });
    });
  }

  it('runs hourly in the worker (a job scheduler), as the job media.sweep', async () => {
    const server = await startTestServer({ env: { ...stores.env('filesystem'), PUBLIC_BASE_URL: 'http://placeholder.invalid' } });
    const workers = await startWorkers(server.svc);
    try {
      const station = await createStation(server.url);
      const bytes = wav(1);
      const grant = await admin(server.url, 'POST', `/stations/${station.id}/media/uploads`, { mime: 'audio/wav', bytes: bytes.length });
      await fetch(grant.body.url.replace('http://placeholder.invalid', server.url), {
        method: 'PUT',
        headers: grant.body.headers,
        body: bytes,
      });
      const row = await server.svc.db('media_uploads').where({ id: grant.body.uploadId }).first();
      await server.svc
        .db('media_uploads')
        .where({ id: row.id })
        .update({ expires_at: new Date(Date.now() - 2 * SWEEP_GRACE_MS) });
      const schedulers = await server.svc.jobs.queue('default').getJobSchedulers();
      expect(schedulers.map((s: { key?: string; id?: string | null }) => s.key ?? s.id)).to.include('media.sweep');
      const job = await server.svc.jobs.enqueue('media.sweep', {});
      await eventually(async () => {
        const stored = await server.svc.jobs.queue('default').getJob(job.id!);
        return stored !== undefined && (await stored.getState()) === 'completed';
      });
      expect(await server.svc.db('media_uploads').where({ id: row.id }).first()).to.equal(undefined);
      expect(await (await server.svc.media.get('filesystem')).head(row.object_key)).to.equal(null);
    } finally {
      await workers.close();
      await server.close();
    }
  });
});
