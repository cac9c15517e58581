// npm run bench:podcasts — a station podcast feed of 300 episodes (the most a feed holds), plain (200)
// and conditional (304), each beside a bare node:http server replaying the same bytes in the same run,
// as bench:radiodns does for the SPI documents; then the time to rebuild the feed after a publish (the
// first read after the publish builds it: episodes query + XML). Web runs as its own process with the
// rate limits off; 50 connections; the two servers alternate over BENCH_ROUNDS rounds of BENCH_SECONDS
// each and the medians are kept. Podcast apps poll feeds with their ETag (Cache-Control max-age=300).
//
// Own database (BENCH_DATABASE_URL, recreated) and Redis index (BENCH_REDIS_URL).
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { BENCH_ENV, bareReplay, besideBare, median, startBenchWeb, stopRole } from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const EPISODES = 300;
const REBUILDS = 7;
const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_podcasts';
const env: Record<string, string> = {
  ...BENCH_ENV,
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14',
  LOG_LEVEL: 'warn',
};

async function call(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : null;
}

/** A one-second 8 kHz 8-bit WAV: every episode's audio (the feed shows its length, not its bytes). */
function wav(): Buffer {
  const samples = 8000;
  const b = Buffer.alloc(44 + samples, 128);
  b.write('RIFFxxxxWAVEfmt ', 0, 'latin1');
  b.writeUInt32LE(36 + samples, 4);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(8000, 24);
  b.writeUInt32LE(8000, 28);
  b.writeUInt16LE(1, 32);
  b.writeUInt16LE(8, 34);
  b.write('data', 36, 'latin1');
  b.writeUInt32LE(samples, 40);
  return b;
}

/** A station with podcasts on and 300 published episodes (one import bundle). */
async function seed(base: string): Promise<{ slug: string; stationId: string }> {
  const slug = `bench-${Date.now().toString(36)}`;
  const cover = await sharp({ create: { width: 1400, height: 1400, channels: 3, background: '#1d3557' } })
    .jpeg()
    .toBuffer();
  const words = 'news music talk city night morning weather sport culture interview'.split(' ');
  const result = await call(base, 'POST', '/import', {
    station: {
      slug,
      name: 'Bench FM',
      timezone: 'Europe/Berlin',
      profile: { description: 'A station that exists to be measured.', websiteUrls: ['https://bench.example/'] },
      podcasts: {
        enabled: true,
        episodeType: 'episode',
        author: 'Bench FM',
        ownerName: 'Bench Owner',
        ownerEmail: 'owner@bench.example',
        language: 'en',
        categories: [{ category: 'News', subcategory: 'Daily News' }],
        imageKey: 'cover',
      },
    },
    types: [
      {
        key: 'episode',
        label: 'Episode',
        fields: [
          { key: 'title', label: 'Title', kind: 'text' },
          { key: 'description', label: 'Description', kind: 'text' },
          { key: 'audio', label: 'Audio', kind: 'media' },
          { key: 'episode', label: 'Episode', kind: 'number' },
        ],
      },
    ],
    media: [
      { key: 'cover', mime: 'image/jpeg', data: cover.toString('base64') },
      { key: 'audio', mime: 'audio/wav', data: wav().toString('base64') },
    ],
    records: Array.from({ length: EPISODES }, (_, i) => ({
      id: randomUUID(),
      type: 'episode',
      values: {
        title: `Episode ${i + 1}: ${words[i % words.length]} & ${words[(i * 7) % words.length]}`,
        description: `What we talked about in episode ${i + 1}. `.repeat(8),
        audio: 'audio',
        episode: i + 1,
      },
      published: true,
    })),
  });
  return { slug, stationId: result.station.id };
}

async function main() {
  const { web, base } = await startBenchWeb(databaseUrl, env);
  const rows: Array<Record<string, string | number>> = [];
  let rebuild: number[] = [];
  try {
    const { slug, stationId } = await seed(base);
    const url = `${base}/podcasts/${slug}/feed.xml`;
    const { bytes, etag, bare, bareUrl } = await bareReplay(url, 'podcast feed');
    try {
      for (const [kind, headers] of [
        ['200', {}],
        ['304', { 'if-none-match': etag }],
      ] as const) {
        rows.push({
          feed: `station, ${EPISODES} episodes`,
          bytes: bytes.length,
          case: kind,
          ...(await besideBare({ url, pid: web.pid! }, { url: bareUrl, pid: bare.pid! }, headers, ROUNDS, SECONDS)),
        });
        console.log(JSON.stringify(rows[rows.length - 1]));
      }
    } finally {
      bare.kill();
    }

    // A publish drops the feed; the next read rebuilds it (timed), and shows the new episode.
    for (let i = 0; i < REBUILDS; i++) {
      const id = randomUUID();
      const audio = (await fetch(url).then((r) => r.text())).match(/<enclosure url="[^"]*\/([0-9a-f-]{36})"/)![1];
      await call(base, 'PUT', `/stations/${stationId}/records/${id}`, { type: 'episode', values: { title: `Fresh ${i}`, audio } });
      await call(base, 'POST', `/stations/${stationId}/records/${id}/publish`, {});
      const started = performance.now();
      const text = await fetch(url).then((r) => r.text());
      const ms = performance.now() - started;
      if (!text.includes(`<title>Fresh ${i}</title>`)) throw new Error('the feed read after a publish does not show it');
      rebuild.push(ms);
    }
  } finally {
    await stopRole(web);
  }
  rebuild = rebuild.slice(1); // the first includes the process' warm-up of the build path
  console.log(
    `\nPodcast feed, ${new Date().toISOString().slice(0, 10)}, median of ${ROUNDS} alternating rounds of ${SECONDS}s per case, 50 connections, web and bare node:http each in their own process`,
  );
  console.table(rows);
  console.log(
    `rebuild after a publish (first read after it, ${EPISODES} episodes): median ${median(rebuild).toFixed(1)} ms, max ${Math.max(...rebuild).toFixed(1)} ms over ${rebuild.length} publishes`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
