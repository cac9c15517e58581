import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config.ts';
import { moveMedia } from '../../../src/domains/media/move.ts';
import { fileOpener, findPublishedFile } from '../../../src/domains/media/queries.ts';
import { MediaStores } from '../../../src/domains/media/stores/index.ts';
import { createStation } from '../../support/factories.ts';
import { startS3, type TestS3 } from '../../support/s3.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { fetchMedia, mediaPath, publishWithMedia, uploaded } from './helpers.ts';

// `waveline media move --to …` (docs/media.md, "Moving an archive"): every file is copied to the
// target, checked against its SHA-256, and its row switched; a run stopped midway resumes; listeners
// are served from the old or the new place throughout; a copy that does not match is not used.

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const MiB = 1024 * 1024;

describe('waveline media move --to', function () {
  this.timeout(120_000);
  let s3: TestS3;
  let dir: string;
  let server: TestServer;
  let uploader: TestServer;
  let stores: MediaStores;
  const files: Array<{ path: string; bytes: Buffer; versionId: string }> = [];
  // Other suites' files share the database: the move is scoped to this suite's station (`--station`).
  let stationId: string;

  before(async () => {
    s3 = await startS3('move-tests');
    dir = await mkdtemp(join(tmpdir(), 'waveline-move-'));
    // Uploads go to postgres. The serving process is configured for S3, with the folder at its data
    // dir's default: it reads every file from the store its row names (as a deployment does while it moves).
    uploader = await startTestServer({ env: { MEDIA_DIR: '', MEDIA_S3_BUCKET: '' } });
    server = await startTestServer({ env: { ...s3.env, MEDIA_DIR: '', WAVELINE_DATA_DIR: dir } });
    const config = loadConfig({ ...process.env, ...s3.env, MEDIA_DIR: '', WAVELINE_DATA_DIR: dir });
    stores = new MediaStores(config.media, server.svc.db);
    const station = await createStation(uploader.url);
    stationId = station.id;
    for (const size of [1000, 3 * MiB + 5, 10]) {
      const bytes = randomBytes(size);
      const media = await uploaded(uploader.url, station.id, bytes, 'audio/mpeg');
      files.push({ path: mediaPath(station.id, media.versionId), bytes, versionId: media.versionId });
    }
    // A file from before the stores: its bytes in its row.
    const legacy = randomBytes(2 * MiB);
    const media = await uploaded(uploader.url, station.id, legacy, 'audio/mpeg');
    await server.svc
      .db('media_files')
      .where({ version_id: media.versionId, variant: 'original' })
      .update({ store: null, object_key: null, bytes: legacy });
    files.push({ path: mediaPath(station.id, media.versionId), bytes: legacy, versionId: media.versionId });
    await publishWithMedia(
      server.url,
      station.id,
      files.map((f) => f.versionId),
    );
  });
  after(async () => {
    await stores.close();
    await server.close();
    await uploader.close();
    await s3.close();
    await rm(dir, { recursive: true, force: true });
  });

  const svcWith = () => ({ db: server.svc.db, media: stores, logger: server.svc.logger, invalidation: server.svc.invalidation });
  const placeOf = async (versionId: string) =>
    server.svc.db('media_files').where({ version_id: versionId, variant: 'original' }).first('store', 'bytes');
  const servedRight = async () => {
    for (const file of files) {
      const res = await fetchMedia(server.url, file.path);
      expect(res.status).to.equal(200);
      expect(sha(res.bytes)).to.equal(sha(file.bytes));
    }
  };

  for (const to of ['filesystem', 's3', 'postgres'] as const) {
    it(`moves every file to ${to}, verified, resumable, while listeners are served`, async () => {
      const progress: number[] = [];
      // Stopped after one file: the next run takes the rest.
      const first = await moveMedia(svcWith(), to, (p) => progress.push(p.files), { stopAfter: 1, stationId });
      expect(first.failed).to.deep.equal([]);
      await servedRight();
      let reading = true;
      const readers = (async () => {
        while (reading) await servedRight();
      })();
      const rest = await moveMedia(svcWith(), to, undefined, { stationId });
      reading = false;
      await readers;
      expect(rest.failed).to.deep.equal([]);
      const moved = await server.svc
        .db('media_files')
        .whereIn(
          'version_id',
          files.map((f) => f.versionId),
        )
        .pluck('store');
      expect(moved.every((s) => s === to)).to.equal(true);
      for (const file of files) expect((await placeOf(file.versionId)).bytes).to.equal(null);
      expect(progress.at(-1)).to.equal(1);
      await servedRight();
    });
  }

  it('a copy whose SHA-256 does not match is not used: the file stays where it was', async () => {
    await moveMedia(svcWith(), 'filesystem', undefined, { stationId });
    const victim = files[0];
    const row = await server.svc.db('media_files').where({ version_id: victim.versionId, variant: 'original' }).first();
    await writeFile(join(dir, 'media', ...row.object_key.split('/')), randomBytes(1000));
    // No copy at the target from the earlier moves: this one is made from the corrupt bytes.
    await (await stores.get('s3')).delete(row.object_key);
    const result = await moveMedia(svcWith(), 's3', undefined, { stationId });
    expect(result.failed.map((f) => f.versionId)).to.deep.equal([victim.versionId]);
    expect((await placeOf(victim.versionId)).store).to.equal('filesystem');
  });

  it('--delete-source: each old copy is removed once its SHA-256 was checked again at the target; without it, or when a copy does not match, the old copy stays', async () => {
    // The file the previous test corrupted gets its bytes back.
    const victim = files[0];
    const victimRow = await server.svc.db('media_files').where({ version_id: victim.versionId, variant: 'original' }).first();
    await writeFile(join(dir, 'media', ...victimRow.object_key.split('/')), victim.bytes);
    const placesOf = async () =>
      server.svc
        .db('media_files')
        .whereIn(
          'version_id',
          files.map((f) => f.versionId),
        )
        .select<Array<{ version_id: string; store: 'postgres' | 's3' | 'filesystem'; object_key: string }>>(
          'version_id',
          'store',
          'object_key',
        );
    const exists = async (place: { store: 'postgres' | 's3' | 'filesystem'; object_key: string }) =>
      (await (await stores.get(place.store)).head(place.object_key)) !== null;

    const before = await placesOf();
    expect((await moveMedia(svcWith(), 'postgres', undefined, { stationId })).failed).to.deep.equal([]);
    for (const place of before) expect(await exists(place), `without --delete-source: ${place.store} keeps its copy`).to.equal(true);

    // One file's chunks are corrupted in postgres: its copy does not match, its source stays.
    const inPostgres = await placesOf();
    const corrupt = inPostgres.find((p) => p.version_id === files[1].versionId)!;
    await server.svc
      .db('media_chunks')
      .where({ object_key: corrupt.object_key, seq: 0 })
      .update({ bytes: randomBytes(1000) });
    // The web process keeps where each file is (now postgres): its reads must follow the move.
    await servedRight().catch(() => undefined);
    let reading = true;
    const healthy = files.filter((f) => f.versionId !== corrupt.version_id);
    const readers = (async () => {
      while (reading) {
        for (const file of healthy) {
          const res = await fetchMedia(server.url, file.path);
          expect(res.status, 'served while its old copy is removed').to.equal(200);
          expect(sha(res.bytes)).to.equal(sha(file.bytes));
        }
      }
    })();
    for (const place of inPostgres) await (await stores.get('s3')).delete(place.object_key); // a target without earlier copies
    const result = await moveMedia(svcWith(), 's3', undefined, { stationId, deleteSource: true });
    reading = false;
    await readers;
    expect(result.failed.map((f) => f.versionId)).to.deep.equal([corrupt.version_id]);
    expect(await exists(corrupt), 'a copy that did not match: its source stays').to.equal(true);
    const after = await placesOf();
    for (const place of inPostgres.filter((p) => p.version_id !== corrupt.version_id)) {
      expect(await exists(place), 'the old copy is removed').to.equal(false);
      const now = after.find((p) => p.version_id === place.version_id)!;
      expect(now.store).to.equal('s3');
      expect(await exists(now)).to.equal(true);
    }
    for (const file of healthy) {
      const res = await fetchMedia(server.url, file.path);
      expect(res.status).to.equal(200);
      expect(sha(res.bytes)).to.equal(sha(file.bytes));
    }
  });

  it('a copy already at the target (an earlier move back and forth) is checked and used, not rewritten under a listener', async () => {
    expect((await moveMedia(svcWith(), 'filesystem', undefined, { stationId })).failed).to.deep.equal([]);
    expect((await moveMedia(svcWith(), 's3', undefined, { stationId })).failed).to.deep.equal([]);
    // Back to the folder, where every file still has its earlier copy; one of them was corrupted meanwhile.
    const rows = await server.svc
      .db('media_files')
      .whereIn(
        'version_id',
        files.map((f) => f.versionId),
      )
      .orderBy('version_id')
      .select<Array<{ version_id: string; object_key: string }>>('version_id', 'object_key');
    const pathOf = (key: string) => join(dir, 'media', ...key.split('/'));
    const [spoiled, ...good] = rows;
    await writeFile(pathOf(spoiled.object_key), randomBytes(10));
    const before = await Promise.all(good.map(async (row) => (await stat(pathOf(row.object_key))).mtimeMs));
    const result = await moveMedia(svcWith(), 'filesystem', undefined, { stationId });
    expect(result.failed).to.deep.equal([]);
    const after = await Promise.all(good.map(async (row) => (await stat(pathOf(row.object_key))).mtimeMs));
    expect(after, 'the matching copies are used as they are').to.deep.equal(before);
    const spoiledFile = files.find((f) => f.versionId === spoiled.version_id)!;
    expect(sha(await readFile(pathOf(spoiled.object_key))), 'the one that did not match is replaced').to.equal(sha(spoiledFile.bytes));
    await servedRight();
  });

  it('--delete-source: a response reading a postgres-store file when its chunks go reads on from the new place', async () => {
    const bytes = randomBytes(3 * MiB + 17);
    const media = await uploaded(uploader.url, stationId, bytes, 'audio/mpeg');
    await publishWithMedia(server.url, stationId, [media.versionId]);
    const file = await findPublishedFile(server.svc.db, stationId, media.versionId, 'original', -1);
    expect(file?.store).to.equal('postgres');
    const svc = { db: server.svc.db, media: stores };
    const stream = await fileOpener(svc, file!, media.versionId, 'original', server.svc.logger)({ start: 0, end: bytes.length - 1 });
    const received: Buffer[] = [];
    const reader = stream[Symbol.asyncIterator]();
    const first = await reader.next();
    received.push(first.value as Buffer);
    const result = await moveMedia(svcWith(), 's3', undefined, { stationId, deleteSource: true });
    expect(result.failed.filter((f) => f.versionId === media.versionId)).to.deep.equal([]);
    expect(await (await stores.get('postgres')).head(file!.object_key!), 'its chunks are gone').to.equal(null);
    for (let next = await reader.next(); !next.done; next = await reader.next()) received.push(next.value as Buffer);
    expect(sha(Buffer.concat(received))).to.equal(sha(bytes));
  });
});
