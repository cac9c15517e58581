import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config.ts';
import { createDb, type Db } from '../../../src/lib/db.ts';
import { MediaStoreUnavailableError, type MediaStore } from '../../../src/domains/media/store.ts';
import { FilesystemMediaStore } from '../../../src/domains/media/stores/filesystem.ts';
import { CHUNK_BYTES, PostgresMediaStore } from '../../../src/domains/media/stores/postgres.ts';
import { S3MediaStore } from '../../../src/domains/media/stores/s3.ts';
import { S3_CREDENTIALS, startS3, type TestS3 } from '../../support/s3.ts';

// The three media stores behind one interface (docs/media.md, "Stores"), each on its real backend:
// Postgres (the test database), a temporary folder, and s3rver through the official S3 SDK.

const MiB = 1024 * 1024;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** `bytes` in pieces of `piece` bytes, as a request body arrives. */
const pieces = (bytes: Buffer, piece = 64 * 1024) =>
  Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; at += piece) yield bytes.subarray(at, at + piece);
    })(),
  );

/** Sends `good` bytes, then fails as a cut connection does. */
const cut = (good: Buffer) =>
  Readable.from(
    (async function* () {
      yield good;
      await new Promise((ok) => setTimeout(ok, 20));
      throw new Error('connection cut');
    })(),
  );

const collect = async (stream: Readable | null): Promise<Buffer> => {
  expect(stream).to.not.equal(null);
  const chunks: Buffer[] = [];
  for await (const chunk of stream as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const keysOf = async (store: MediaStore) => {
  const keys: string[] = [];
  for await (const { key } of store.list()) keys.push(key);
  return keys.sort();
};

describe('media stores', function () {
  this.timeout(60_000);
  let db: Db;
  let dir: string;
  let s3: TestS3;
  const stores: Record<string, () => MediaStore> = {};

  before(async () => {
    db = createDb(loadConfig().databaseUrl);
    dir = await mkdtemp(join(tmpdir(), 'waveline-media-'));
    s3 = await startS3('store-tests');
    const postgres = new PostgresMediaStore(db);
    const filesystem = new FilesystemMediaStore(dir);
    const onS3 = new S3MediaStore({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      prefix: 'pre/fix/',
      credentials: S3_CREDENTIALS,
    });
    stores.postgres = () => postgres;
    stores.filesystem = () => filesystem;
    stores.s3 = () => onS3;
  });

  after(async () => {
    await db.destroy();
    await s3.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const name of ['postgres', 'filesystem', 's3']) {
    describe(name, () => {
      const prefix = `st_${name}/${randomBytes(4).toString('hex')}/`;

      it('stores a stream and reports its size and SHA-256, computed on the way', async () => {
        const store = stores[name]();
        const bytes = randomBytes(3 * MiB + 12345);
        const stored = await store.put(`${prefix}a.bin`, pieces(bytes), { mime: 'application/octet-stream' });
        expect(stored).to.deep.equal({ size: bytes.length, sha256: sha(bytes) });
        expect(await store.head(`${prefix}a.bin`)).to.deep.equal({ size: bytes.length });
        expect(sha(await collect(await store.get(`${prefix}a.bin`)))).to.equal(sha(bytes));
      });

      it('reads byte ranges, across chunk and part boundaries', async () => {
        const store = stores[name]();
        const bytes = randomBytes(2 * MiB + 7);
        await store.put(`${prefix}r.bin`, pieces(bytes, 100_000), { mime: 'audio/mpeg' });
        for (const [start, end] of [
          [0, 0],
          [10, 19],
          [CHUNK_BYTES - 3, CHUNK_BYTES + 2],
          [CHUNK_BYTES, 2 * CHUNK_BYTES - 1],
          [bytes.length - 5, bytes.length - 1],
          [0, bytes.length - 1],
        ]) {
          const got = await collect(await store.get(`${prefix}r.bin`, { start, end }));
          expect(Buffer.compare(got, bytes.subarray(start, end + 1)), `${start}-${end}`).to.equal(0);
        }
      });

      it('stores an empty stream and a small one', async () => {
        const store = stores[name]();
        await store.put(`${prefix}s.txt`, Readable.from([Buffer.from('hello')]), { mime: 'text/plain' });
        expect(await text((await store.get(`${prefix}s.txt`)) as Readable)).to.equal('hello');
      });

      it('answers null for an object it does not have, and deletes', async () => {
        const store = stores[name]();
        expect(await store.get(`${prefix}missing`)).to.equal(null);
        expect(await store.head(`${prefix}missing`)).to.equal(null);
        await store.put(`${prefix}d.bin`, pieces(randomBytes(1000)), { mime: 'application/octet-stream' });
        await store.delete(`${prefix}d.bin`);
        expect(await store.head(`${prefix}d.bin`)).to.equal(null);
        await store.delete(`${prefix}d.bin`); // twice is fine
      });

      it('lists its objects with their sizes (what a move copies)', async () => {
        const store = stores[name]();
        const listPrefix = `${prefix}list/`;
        await store.put(`${listPrefix}one.bin`, pieces(randomBytes(10)), { mime: 'application/octet-stream' });
        await store.put(`${listPrefix}sub/two.bin`, pieces(randomBytes(20)), { mime: 'application/octet-stream' });
        const listed: Array<{ key: string; size: number }> = [];
        for await (const object of store.list(listPrefix)) listed.push(object);
        expect(listed.sort((a, b) => a.key.localeCompare(b.key))).to.deep.equal([
          { key: `${listPrefix}one.bin`, size: 10 },
          { key: `${listPrefix}sub/two.bin`, size: 20 },
        ]);
      });

      it('leaves nothing behind when the body fails midway, and rejects with the body’s error', async () => {
        const store = stores[name]();
        const before = await keysOf(store);
        // Past one multipart part and one chunk, so something was sent before the cut.
        const err = await store.put(`${prefix}cut.bin`, cut(randomBytes(9 * MiB)), { mime: 'audio/mpeg' }).catch((e: unknown) => e);
        expect((err as Error).message).to.equal('connection cut');
        expect(await store.head(`${prefix}cut.bin`)).to.equal(null);
        expect(await keysOf(store)).to.deep.equal(before);
        if (name === 'filesystem')
          expect((await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.partial'))).to.deep.equal([]);
        if (name === 'postgres')
          expect(
            await db('media_chunks')
              .where({ object_key: `${prefix}cut.bin` })
              .count('* as n')
              .first(),
          ).to.deep.equal({ n: 0 });
      });
    });
  }

  it('s3: a large upload goes in parts, under MEDIA_S3_PREFIX', async () => {
    const store = stores.s3();
    const bytes = randomBytes(20 * MiB);
    const stored = await store.put('big/episode.mp3', pieces(bytes, 1 * MiB), { mime: 'audio/mpeg' });
    expect(stored.sha256).to.equal(sha(bytes));
    expect(await s3.keys()).to.include('pre/fix/big/episode.mp3');
    expect(store.publicPath('big/episode.mp3')).to.equal('pre/fix/big/episode.mp3');
  });

  it('s3: a stopped server is MediaStoreUnavailableError (503 with Retry-After), and nothing is stored', async () => {
    const store = stores.s3();
    await s3.stop();
    try {
      const err = await store.put('down/x.bin', pieces(randomBytes(1000)), { mime: 'application/octet-stream' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(MediaStoreUnavailableError);
      expect(err).to.include({ status: 503, code: 'PROVIDER_UNAVAILABLE' });
      expect((err as MediaStoreUnavailableError).retryAfterSeconds).to.be.greaterThan(0);
      expect(await store.get('down/x.bin').catch((e: unknown) => e)).to.be.instanceOf(MediaStoreUnavailableError);
    } finally {
      await s3.start();
    }
    expect(await store.head('down/x.bin')).to.equal(null);
  });

  it('filesystem: a folder it cannot write is MediaStoreUnavailableError', async () => {
    await writeFile(join(dir, 'a-file'), 'not a folder');
    const store = new FilesystemMediaStore(join(dir, 'a-file', 'media'));
    const err = await store.put('a/b.bin', pieces(randomBytes(10)), { mime: 'application/octet-stream' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(MediaStoreUnavailableError);
  });
});
