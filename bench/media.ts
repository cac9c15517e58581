// npm run bench:media — media on each store (docs/media.md, "Performance"), each beside its baseline in
// the same run:
// - a BENCH_MIB (200) MiB audio upload through the admin API, against copying the same bytes to the same
//   store bare (`cp` for the filesystem, the S3 SDK's multipart Upload for s3, 1 MiB inserts with pg for
//   postgres); the web process's RSS growth while it runs (sampled from /proc every 50 ms); for the
//   filesystem the disk's floors too: `dd` with fsync, and a bare node:http server hashing the body and
//   writing it with fsync (the store fsyncs before its 201, `cp` does not);
// - 50 connections reading one 256 KiB range of the episode for BENCH_SECONDS, against a bare node:http
//   server sending the same range of the same file from disk (and, for postgres and s3, reading it from
//   that store bare, one query or GetObject per request: the store's floor).
// The web runs as `waveline dev` in its own process: the embedded default for filesystem (no
// DATABASE_URL: that run is the "embedded default stores 200 MiB" figure) and s3 (s3rver, in its own
// process), and BENCH_DATABASE_URL (recreated) for postgres. Rate limits off.
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { spawn, spawnSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { BENCH_ENV, freePort, load, recreateDatabase, startRole, stopRole, waitUntilReady } from './support.ts';

const MiB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_MIB ?? 200) * MiB;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RANGE = `bytes=${8 * MiB}-${8 * MiB + 256 * 1024 - 1}`;
const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
// Random bytes: as audio/mpeg, music-metadata scans all of them for frames (a worst case); BENCH_MIME=video/mp4 skips that.
const MIME = process.env.BENCH_MIME ?? 'audio/mpeg';
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_media';
const S3_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', MEDIA_S3_REGION: 'us-east-1' };

const work = mkdtempSync(join(tmpdir(), 'waveline-bench-media-'));
const episode = join(work, 'episode.mp3');
writeFileSync(episode, randomBytes(SIZE));

const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

async function call(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** Streams the episode file to the upload route; seconds and the receipt. */
function upload(base: string, stationId: string): Promise<{ seconds: number; versionId: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${base}/admin/v1/stations/${stationId}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': MIME, 'content-length': SIZE },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () =>
        res.statusCode === 201
          ? resolve({ seconds: (performance.now() - started) / 1000, versionId: JSON.parse(text).versionId })
          : reject(new Error(`upload: ${res.statusCode} ${text}`)),
      );
    });
    createReadStream(episode).pipe(req);
  });
}

async function startS3rver(): Promise<{ child: ChildProcess; endpoint: string }> {
  const port = await freePort();
  const dir = join(work, 's3');
  const bin = new URL('../node_modules/s3rver/bin/s3rver.js', import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    [bin, '-d', dir, '-p', String(port), '-a', '127.0.0.1', '--silent', '--configure-bucket', 'bench'],
    {
      stdio: 'ignore',
    },
  );
  const endpoint = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(endpoint).then(
        () => true,
        () => false,
      )
    )
      return { child, endpoint };
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error('s3rver did not start');
}

/** The disk's floor for a durable copy: `dd` with fsync (the filesystem store fsyncs before its 201; `cp` does not). */
function durableCopy(): number {
  const started = performance.now();
  spawnSync('dd', [`if=${episode}`, `of=${join(work, 'durable.mp3')}`, 'bs=8M', 'conv=fsync'], { stdio: 'ignore' });
  const seconds = (performance.now() - started) / 1000;
  rmSync(join(work, 'durable.mp3'), { force: true });
  return seconds;
}

async function baseline(store: string, s3Endpoint: string): Promise<number> {
  const started = performance.now();
  if (store === 'filesystem') spawnSync('cp', [episode, join(work, 'copy.mp3')]);
  if (store === 's3') {
    const client = new S3Client({
      endpoint: s3Endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    await new Upload({
      client,
      params: { Bucket: 'bench', Key: 'bare/episode.mp3', Body: createReadStream(episode) },
      partSize: 8 * MiB,
      queueSize: 2,
    }).done();
    client.destroy();
  }
  if (store === 'postgres') {
    const client = new pg.Client(databaseUrl);
    await client.connect();
    await client.query('CREATE TABLE IF NOT EXISTS bench_chunks (k text, seq int, bytes bytea, PRIMARY KEY (k, seq))');
    let seq = 0;
    for await (const chunk of createReadStream(episode, { highWaterMark: MiB }))
      await client.query('INSERT INTO bench_chunks VALUES ($1, $2, $3)', ['bare', seq++, chunk]);
    await client.end();
  }
  return (performance.now() - started) / 1000;
}

/** The episode sent to a bare node:http server that hashes it and writes it with fsync (the filesystem store's floor). */
async function bareUpload(): Promise<number> {
  const port = await freePort();
  const child = fork(new URL('./support/bareUpload.ts', import.meta.url).pathname, [join(work, 'bare-upload.mp3'), String(port)], {
    stdio: 'inherit',
  });
  await new Promise<void>((ok) => child.once('message', () => ok()));
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const req = request(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-length': SIZE } });
    req.on('error', reject);
    req.on('response', (res) => res.resume().on('end', () => resolve()));
    createReadStream(episode).pipe(req);
  });
  child.kill();
  return (performance.now() - started) / 1000;
}

/**
 * Range reads from a bare node:http server: from the file on disk, from the postgres store's chunks of
 * `objectKey`, or from the bare copy on s3rver.
 */
async function bareRange(from?: { objectKey: string } | { s3Endpoint: string }): Promise<number> {
  const port = await freePort();
  const args = [episode, String(port)];
  if (from && 'objectKey' in from) args.push(databaseUrl, from.objectKey);
  if (from && 's3Endpoint' in from) args.push(from.s3Endpoint);
  const child = fork(new URL('./support/bareRange.ts', import.meta.url).pathname, args, { stdio: 'inherit' });
  await new Promise<void>((ok) => child.once('message', () => ok()));
  const url = `http://127.0.0.1:${port}/`;
  await load(url, { range: RANGE }, 1);
  const figures = await load(url, { range: RANGE }, SECONDS);
  child.kill();
  return figures.rps;
}

async function objectKeyOf(versionId: string): Promise<string> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const { rows } = await client.query("SELECT object_key FROM media_files WHERE version_id = $1 AND variant = 'original'", [versionId]);
  await client.end();
  return rows[0].object_key;
}

async function run(store: string, s3Endpoint: string): Promise<Record<string, string | number>> {
  const port = await freePort();
  const env: Record<string, string> = {
    ...BENCH_ENV,
    LOG_LEVEL: 'warn',
    WAVELINE_DEMO: '0',
    REQUEST_LOG: '0',
    PORT: String(port),
    GATEWAY_PORT: String(await freePort()),
    WORKER_PORT: String(await freePort()),
    WAVELINE_DATA_DIR: join(work, `data-${store}`),
    DATABASE_URL: '',
    REDIS_URL: '',
    MEDIA_DIR: '',
    MEDIA_S3_BUCKET: '',
  };
  if (store === 'postgres') {
    await recreateDatabase(databaseUrl);
    env.DATABASE_URL = databaseUrl;
  }
  if (store === 's3') Object.assign(env, S3_ENV, { MEDIA_S3_BUCKET: 'bench', MEDIA_S3_ENDPOINT: s3Endpoint });
  const web = startRole('dev', env);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(base, 60_000);
    const station = await call(base, 'POST', '/stations', { slug: `bench-${store}`, name: 'Bench FM', timezone: 'Europe/Berlin' });
    const before = rssKiB(web.pid as number);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(web.pid as number))), 50);
    const uploaded = await upload(base, station.id);
    clearInterval(sampler);
    const bare = await baseline(store, s3Endpoint);
    const floor = store === 'filesystem' ? durableCopy() : null;
    const httpFloor = store === 'filesystem' ? await bareUpload() : null;
    await call(base, 'PUT', `/stations/${station.id}/content-types/story`, {
      label: 'Story',
      fields: [{ key: 'title', label: 'Title', kind: 'text' }],
    });
    const record = crypto.randomUUID();
    await call(base, 'PUT', `/stations/${station.id}/records/${record}`, {
      type: 'story',
      values: { title: 'Ep' },
      media: [{ versionId: uploaded.versionId }],
    });
    await call(base, 'POST', `/stations/${station.id}/records/${record}/publish`, {});
    const url = `${base}/api/media/public/${station.id}/${uploaded.versionId}`;
    await load(url, { range: RANGE }, 1);
    const ranges = await load(url, { range: RANGE }, SECONDS);
    const bareRps = await bareRange();
    const storeRps =
      store === 'postgres'
        ? await bareRange({ objectKey: await objectKeyOf(uploaded.versionId) })
        : store === 's3'
          ? await bareRange({ s3Endpoint })
          : null;
    return {
      store,
      'upload s': uploaded.seconds.toFixed(2),
      'bare copy s': bare.toFixed(2),
      'upload / bare': (uploaded.seconds / bare).toFixed(2),
      'fsync copy s': floor === null ? '-' : floor.toFixed(2),
      'bare HTTP+fsync s': httpFloor === null ? '-' : httpFloor.toFixed(2),
      'RSS growth MiB': ((peak - before) / 1024).toFixed(1),
      'range reads/s': Math.round(ranges.rps),
      'bare node:http/s': Math.round(bareRps),
      'range ratio': (ranges.rps / bareRps).toFixed(2),
      'bare from store/s': storeRps === null ? '-' : Math.round(storeRps),
      'non-2xx': ranges.non2xx,
    };
  } finally {
    await stopRole(web);
  }
}

const s3 = await startS3rver();
const rows: Array<Record<string, string | number>> = [];
try {
  for (const store of (process.env.BENCH_STORES ?? 'filesystem,s3,postgres').split(',')) {
    rows.push(await run(store, s3.endpoint));
    console.table(rows);
  }
} finally {
  s3.child.kill();
  rmSync(work, { recursive: true, force: true });
}
console.log(
  `${SIZE / MiB} MiB upload; range ${RANGE}, 50 connections, ${SECONDS} s; ${new Date().toISOString()}; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
process.exit(0);
