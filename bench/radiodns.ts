// npm run bench:radiodns — the RadioDNS SPI documents (SI.xml, PI.xml by service id and by FM bearer),
// plain (200) and conditional (304), each beside a bare node:http server replaying the same bytes in the
// same run, as bench:reads does for the listener reads. Web runs as its own process with the rate
// limits off; 50 connections; the two servers alternate over BENCH_ROUNDS rounds of BENCH_SECONDS each
// and the medians are kept. Receivers poll these documents with their ETag (Cache-Control max-age=300).
//
// The station's fqdn is 127.0.0.1, so SI.xml answers to the URL's own Host header.
// Own database (BENCH_DATABASE_URL, recreated) and Redis index (BENCH_REDIS_URL).
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { DateTime } from 'luxon';
import { BENCH_ENV, bareReplay, besideBare, startBenchWeb, stopRole } from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_radiodns';
const env: Record<string, string> = {
  ...BENCH_ENV,
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13',
  LOG_LEVEL: 'warn',
};

async function call(base: string, method: string, path: string, body: unknown, contentType = 'application/json'): Promise<any> {
  const res = await fetch(`${base}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': contentType },
    body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A RadioDNS station with a logo, two streams and a week of 3-hour broadcasts (8 a day). */
async function seed(base: string): Promise<{ date: string }> {
  const station = await call(base, 'POST', '/stations', {
    slug: `bench-${Date.now().toString(36)}`,
    name: 'Bench FM',
    timezone: 'Europe/Berlin',
    profile: {
      tagline: 'Benchmarks all day',
      description: 'A station that exists to be measured.',
      websiteUrls: ['https://bench.example/'],
      streamUrls: [
        { label: 'MP3', url: 'https://stream.example/live.mp3', mime: 'audio/mpeg', bitrateKbps: 128 },
        { label: 'AAC', url: 'https://stream.example/live.aac', mime: 'audio/aac', bitrateKbps: 64 },
      ],
    },
  });
  const logo = await sharp({ create: { width: 800, height: 800, channels: 4, background: '#e63946' } })
    .png()
    .toBuffer();
  const { versionId } = await call(base, 'POST', `/stations/${station.id}/media`, logo, 'image/png');
  await call(base, 'PATCH', `/stations/${station.id}`, {
    radiodns: {
      enabled: true,
      fqdn: '127.0.0.1',
      serviceIdentifier: 'bench',
      shortName: 'Bench',
      mediumName: 'Bench FM',
      bearers: [
        { id: 'fm:de0.d3a1.10170', cost: 20 },
        { id: 'dab:de0.1001.d3a1.0', cost: 30 },
      ],
      logoVersionId: versionId,
      genres: [{ href: 'urn:tva:metadata:cs:ContentCS:2004:3.6', name: 'Music' }],
    },
  });
  const programId = randomUUID();
  await call(base, 'PUT', `/stations/${station.id}/programs/${programId}`, {
    title: 'Morning Show',
    description: 'Wake up with the news, the weather and the best music in town.',
    presenterIds: [],
    slots: [],
  });
  const hour = 3_600_000;
  const first = Math.floor(Date.now() / hour) * hour - 24 * hour;
  for (let i = 0; i < 8 * 8; i++) {
    const startsAt = first + i * 3 * hour;
    await call(base, 'PUT', `/stations/${station.id}/broadcasts/${randomUUID()}`, {
      programId,
      title: `Show ${i}`,
      startsAt: new Date(startsAt).toISOString(),
      endsAt: new Date(startsAt + 3 * hour).toISOString(),
      nature: 'live',
    });
  }
  return { date: DateTime.now().setZone('Europe/Berlin').toFormat('yyyyMMdd') };
}

async function main() {
  const { web, base } = await startBenchWeb(databaseUrl, env);
  const rows: Array<Record<string, string | number>> = [];
  try {
    const { date } = await seed(base);
    const documents: Array<[string, string]> = [
      ['SI.xml', '/radiodns/spi/3.1/SI.xml'],
      ['PI.xml by service id', `/radiodns/spi/3.1/id/127.0.0.1/bench/${date}_PI.xml`],
      ['PI.xml by FM bearer', `/radiodns/spi/3.1/fm/de0/d3a1/10170/${date}_PI.xml`],
    ];
    for (const [name, path] of documents) {
      const url = `${base}${path}`;
      const { bytes, etag, bare, bareUrl } = await bareReplay(url, name);
      try {
        for (const [kind, conditional] of [
          ['200', null],
          ['304', etag],
        ] as const) {
          rows.push({
            document: name,
            bytes: bytes.length,
            case: kind,
            ...(await besideBare(
              { url, pid: web.pid! },
              { url: bareUrl, pid: bare.pid! },
              conditional ? { 'if-none-match': conditional } : {},
              ROUNDS,
              SECONDS,
            )),
          });
          console.log(JSON.stringify(rows[rows.length - 1]));
        }
      } finally {
        bare.kill();
      }
    }
  } finally {
    await stopRole(web);
  }
  console.log(
    `\nRadioDNS SPI documents, ${new Date().toISOString().slice(0, 10)}, median of ${ROUNDS} alternating rounds of ${SECONDS}s per case, 50 connections, web and bare node:http each in their own process`,
  );
  console.table(rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
