// npm run bench:artwork — the artwork worker against bare sharp, and ingest → follow-up frame.
// 1. Throughput: IMAGES distinct 1000 × 1000 JPEGs on a local image server; the worker's `artwork.check`
//    jobs (fetch over HTTP, decode, size and aspect, dHash against the logo and blocks, SHA-256, store
//    the original and the three square variants in Postgres) against bare sharp doing the same decode +
//    dHash + three variants on the same bytes, in this process, in the same run (same parallelism: 8).
//    Ratio = worker images/s ÷ bare images/s (target ≥ 0.8).
//    The floor: what any worker that keeps the images must do beyond bare sharp — fetch the bytes over
//    HTTP from the same image server and store the original and the three variants in Postgres (one
//    transaction, a scratch table of the bench database) — measured the same way in the same run; the
//    worker's ratio to it says what is left to gain in our own code.
// 2. Latency: INGESTS observations each with a new image URL; from the ingest request to the
//    `now-playing` feed message whose track carries `artwork` (the follow-up frame), p50/p99.
// Web and worker run in this process on their own database (BENCH_DATABASE_URL, recreated) and Redis
// index (BENCH_REDIS_URL).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { BENCH_ENV, recreateDatabase, summary } from './support.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/lib/logger.ts';
import { createBlockingRedis } from '../src/lib/redis.ts';
import { keys } from '../src/lib/keys.ts';
import { createWebServices } from '../src/roles/services.ts';
import { startWeb } from '../src/roles/web.ts';
import { migrate } from '../src/roles/migrate.ts';
import { startWorkers } from '../workers/index.ts';
import { dhashOf } from '../src/domains/artwork/dhash.ts';

const IMAGES = Number(process.env.BENCH_IMAGES ?? 48);
const INGESTS = Number(process.env.BENCH_INGESTS ?? 60);
const PARALLEL = 8;
const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_artwork';
const env: Record<string, string> = {
  ...process.env,
  ...BENCH_ENV,
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13',
  LOG_LEVEL: 'warn',
  PORT: '0',
  WEBHOOKS_ALLOW_INSECURE: '1',
};

async function picture(seed: number): Promise<Buffer> {
  const blocks = Buffer.alloc(16 * 16 * 3);
  for (let i = 0; i < blocks.length; i++) blocks[i] = (seed * 7919 + i * 104729) % 251;
  return sharp(blocks, { raw: { width: 16, height: 16, channels: 3 } })
    .resize(1000, 1000, { kernel: 'cubic' })
    .jpeg({ quality: 85 })
    .toBuffer();
}

async function pool<T>(items: T[], width: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await task(items[next++]);
    }),
  );
}

/** What the worker does to an image's bytes, with bare sharp: decode, dHash, three square variants. */
async function bare(bytes: Buffer): Promise<Buffer[]> {
  await sharp(bytes).metadata();
  await dhashOf(bytes);
  return Promise.all(
    [300, 600, 1200].map((side) =>
      sharp(bytes, { autoOrient: true })
        .resize(Math.min(side, 1000), Math.min(side, 1000), { fit: 'cover', position: sharp.strategy.attention })
        .jpeg({ quality: 85 })
        .toBuffer(),
    ),
  );
}

async function main(): Promise<void> {
  await recreateDatabase(databaseUrl);
  const config = loadConfig(env);
  await migrate(config);
  const logger = createLogger(config, 'bench');
  const svc = await createWebServices(config, logger);
  const web = await startWeb(svc, 0, logger);
  const base = `http://127.0.0.1:${(web.server.address() as AddressInfo).port}`;
  const workers = await startWorkers(svc);

  const images = new Map<string, Buffer>();
  const host = createServer((req, res) => {
    const bytes = images.get(req.url ?? '');
    res.writeHead(bytes ? 200 : 404, { 'content-type': 'image/jpeg' });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  const hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;

  const call = async (method: string, path: string, body?: unknown, token = ADMIN) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  const station = await call('POST', '/admin/v1/stations', {
    slug: `bench-${Date.now().toString(36)}`,
    name: 'Bench',
    timezone: 'Europe/Berlin',
    rundownFollowing: false,
  });

  // 1. Throughput.
  const sources: Buffer[] = [];
  for (let i = 0; i < IMAGES; i++) sources.push(await picture(i + 1));
  const bareStarted = performance.now();
  await pool(sources, PARALLEL, bare);
  const bareSeconds = (performance.now() - bareStarted) / 1000;

  sources.forEach((bytes, i) => images.set(`/t/${i}.jpg`, bytes));
  // The floor: fetch + bare sharp + the four files stored in Postgres.
  await svc.db.raw('CREATE TABLE bench_floor_files (id bigserial PRIMARY KEY, variant int NOT NULL, bytes bytea NOT NULL)');
  const floorStarted = performance.now();
  await pool(
    sources.map((_, i) => i),
    PARALLEL,
    async (i) => {
      const bytes = Buffer.from(await (await fetch(`${hostUrl}/t/${i}.jpg`)).arrayBuffer());
      const variants = await bare(bytes);
      await svc.db.transaction((trx) => trx('bench_floor_files').insert([bytes, ...variants].map((b, variant) => ({ variant, bytes: b }))));
    },
  );
  const floorSeconds = (performance.now() - floorStarted) / 1000;
  await svc.db.raw('DROP TABLE bench_floor_files');

  const workerStarted = performance.now();
  await Promise.all(
    sources.map((_, i) => svc.jobs.enqueue('artwork.check', { stationId: station.id, url: `${hostUrl}/t/${i}.jpg`, source: 'ingest' })),
  );
  for (;;) {
    const { n } = (await svc.db('artwork_checks').where({ station_id: station.id }).count({ n: '*' }).first()) as { n: string };
    if (Number(n) >= IMAGES) break;
    // Polled every 25 ms: the measurement's own queries stay a small share of the machine.
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const workerSeconds = (performance.now() - workerStarted) / 1000;
  const kept = await svc.db('artwork_checks').where({ station_id: station.id, status: 'kept' }).count({ n: '*' }).first();

  // 2. Ingest → follow-up frame with kept art.
  const { token: ingestToken } = await call('POST', `/admin/v1/stations/${station.id}/credentials`, {
    scopes: ['ingest:write'],
    label: 'bench',
  });
  const subscriber = createBlockingRedis(config.redis);
  const waiting = new Map<string, (at: number) => void>();
  subscriber.on('pmessage', (_p: string, _c: string, raw: string) => {
    const message = JSON.parse(raw) as { kind: string; data: { track: { title: string; artwork: unknown } | null } };
    if (message.kind !== 'now-playing' || !message.data.track?.artwork) return;
    waiting.get(message.data.track.title)?.(performance.now());
  });
  await subscriber.psubscribe(keys.feedChannelPattern);
  const delays: number[] = [];
  for (let i = 0; i < INGESTS; i++) {
    const title = `Track ${i}`;
    images.set(`/i/${i}.jpg`, await picture(10_000 + i));
    const arrived = new Promise<number>((resolve) => waiting.set(title, resolve));
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/integrations/playback?stationSlug=${station.slug}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ingestToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ artist: 'Bench', title, artworkUrl: `${hostUrl}/i/${i}.jpg` }),
    });
    await res.text();
    delays.push((await arrived) - started);
  }
  subscriber.disconnect();

  const workerRate = IMAGES / workerSeconds;
  const bareRate = IMAGES / bareSeconds;
  const floorRate = IMAGES / floorSeconds;
  const latency = summary(delays.sort((a, b) => a - b));
  console.log(`images: ${IMAGES} distinct 1000×1000 JPEGs (${Number((kept as { n: string }).n)} kept), ${PARALLEL} at a time`);
  console.log(
    `worker: ${workerRate.toFixed(1)} images/s  bare sharp: ${bareRate.toFixed(1)} images/s  ratio ${(workerRate / bareRate).toFixed(2)}`,
  );
  console.log(
    `floor (fetch + bare sharp + 4 files stored in Postgres): ${floorRate.toFixed(1)} images/s, ${(floorRate / bareRate).toFixed(2)} of bare; worker ÷ floor ${(workerRate / floorRate).toFixed(2)}`,
  );
  console.log(
    `ingest → follow-up frame with kept art (${INGESTS} ingests, one at a time): p50 ${latency.p50.toFixed(0)} ms, p99 ${latency.p99.toFixed(0)} ms, max ${latency.max.toFixed(0)} ms`,
  );

  await workers.close();
  await web.close(500);
  await svc.close();
  host.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
