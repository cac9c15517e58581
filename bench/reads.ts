// npm run bench:reads — every listener read, plain (200) and conditional (304), each beside a bare
// node:http server replaying the same bytes in the same run, plus one GraphQL query (now-playing +
// current broadcast). Web runs as its own process (as bench:station does) with the rate limits off;
// 50 connections; the two servers alternate over BENCH_ROUNDS rounds of BENCH_SECONDS each and the
// medians are kept. Prints req/s, p99 and server CPU per request with their ratios.
//
// Conditional requests revalidate like a polling app: each connection sends the ETag of the last 200
// it received (now-playing and weather show an age in whole seconds, so their ETag moves every second;
// a fixed If-None-Match would turn into 200s). The bare server gets the very same client.
//
// Own database (BENCH_DATABASE_URL, recreated) and Redis index (BENCH_REDIS_URL).
// BENCH_READ_CACHE_MAX_BYTES=0 runs the web role without the read cache (the figures before it).
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { BENCH_ENV, cpuSplitMs, freePort, startBare, startBenchWeb, stopRole } from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null;
const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_reads';
const env: Record<string, string> = {
  ...BENCH_ENV,
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13',
  LOG_LEVEL: 'warn',
  ...(process.env.BENCH_READ_CACHE_MAX_BYTES !== undefined ? { READ_CACHE_MAX_BYTES: process.env.BENCH_READ_CACHE_MAX_BYTES } : {}),
};

async function call(base: string, method: string, path: string, body: unknown, token = ADMIN): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A station with what every read shows: 100 articles, a week of broadcasts (one on air), a track, weather and traffic. */
async function seed(base: string) {
  const admin = (method: string, path: string, body?: unknown) => call(base, method, `/admin/v1${path}`, body);
  const slug = `bench-${Date.now().toString(36)}`;
  const feeds = { weather: true, traffic: true };
  const station = await admin('POST', '/stations', {
    slug,
    name: 'Bench FM',
    timezone: 'Europe/Berlin',
    rundownFollowing: false,
    upNext: { enabled: true, count: 2 },
    modules: feeds,
    entitlements: feeds,
    redistribution: feeds,
    profile: {
      tagline: 'Benchmarks all day',
      streamUrls: [
        { label: 'MP3', url: 'https://stream.example/live.mp3', mime: 'audio/mpeg', bitrateKbps: 128, key: 'mp3', latencySeconds: 6 },
      ],
    },
  });
  const { token } = await admin('POST', `/stations/${station.id}/credentials`, { scopes: ['listener:read'] });
  const { token: ingestToken } = await admin('POST', `/stations/${station.id}/credentials`, { scopes: ['ingest:write'] });
  await admin('PUT', `/stations/${station.id}/content-types/article`, {
    label: 'Article',
    fields: [
      { key: 'title', label: 'Title', kind: 'text', required: true },
      { key: 'slug', label: 'Slug', kind: 'text' },
      { key: 'summary', label: 'Summary', kind: 'rich_text' },
    ],
  });
  let recordId = '';
  for (let i = 0; i < 100; i++) {
    recordId = randomUUID();
    await admin('PUT', `/stations/${station.id}/records/${recordId}`, {
      type: 'article',
      values: { title: `Article ${i}`, slug: `article-${i}`, summary: 'A paragraph of text. '.repeat(10) },
    });
    await admin('POST', `/stations/${station.id}/records/${recordId}/publish`, {});
  }
  const presenterId = randomUUID();
  await admin('PUT', `/stations/${station.id}/presenters/${presenterId}`, { title: 'Ana Host' });
  const programId = randomUUID();
  await admin('PUT', `/stations/${station.id}/programs/${programId}`, {
    title: 'Morning Show',
    description: 'Wake up',
    presenterIds: [presenterId],
    slots: [{ weekday: 1, startTime: '06:00', durationMinutes: 180 }],
  });
  const hour = 3_600_000;
  const first = Math.floor(Date.now() / hour) * hour - 24 * hour;
  for (let i = 0; i < 8 * 8; i++) {
    const startsAt = first + i * 3 * hour;
    await admin('PUT', `/stations/${station.id}/broadcasts/${randomUUID()}`, {
      programId,
      startsAt: new Date(startsAt).toISOString(),
      endsAt: new Date(startsAt + 3 * hour).toISOString(),
      nature: 'live',
    });
  }
  await call(
    base,
    'POST',
    `/api/v1/integrations/playback?stationSlug=${slug}`,
    { artist: 'Artist', title: 'Title', durationSeconds: 240, observedAt: Date.now() },
    ingestToken,
  );
  const observedAt = new Date(Date.now() - 60_000).toISOString();
  await admin('PUT', `/stations/${station.id}/weather`, {
    observedAt,
    snapshots: [
      {
        locationId: 'berlin',
        locationName: 'Berlin',
        kind: 'current',
        validFrom: observedAt,
        conditionCode: 'PartlyCloudy',
        temperatureC: 7.5,
      },
    ],
  });
  await admin('PUT', `/stations/${station.id}/traffic`, {
    observedAt,
    snapshot: { area: 'Berlin', incidents: [{ id: 'inc-1', type: 'accident', severity: 'major', road: 'A100' }] },
  });
  return { slug, token, recordId };
}

interface Figures {
  rps: number;
  p99: number;
  /** CPU µs per request, user + system, and the user-space part of it. */
  cpu: number;
  user: number;
  non2xx3xx: number;
}

/** One load of SECONDS; `revalidate` makes each request carry the ETag of the last 200 seen. */
async function measure(url: string, headers: Record<string, string>, pid: number, revalidate: boolean): Promise<Figures> {
  let etag = '';
  const requests = revalidate
    ? [
        {
          setupRequest: (req: any) => ({ ...req, headers: { ...headers, 'if-none-match': etag } }),
          onResponse: (status: number, _body: string, _context: unknown, responseHeaders: Record<string, string>) => {
            if (status === 200) etag = responseHeaders.etag ?? responseHeaders.ETag ?? etag;
          },
        },
      ]
    : undefined;
  const before = cpuSplitMs(pid);
  const result = await autocannon({
    url,
    headers,
    duration: SECONDS,
    connections: 50,
    pipelining: 1,
    ...(requests ? { requests } : {}),
  } as autocannon.Options);
  const after = cpuSplitMs(pid);
  const bad = result.non2xx - (result['3xx'] ?? 0);
  const perRequest = (ms: number) => (ms * 1000) / Math.max(1, result.requests.total);
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    cpu: perRequest(after.user + after.system - before.user - before.system),
    user: perRequest(after.user - before.user),
    non2xx3xx: bad,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const { web, base } = await startBenchWeb(databaseUrl, env);
  const rows: Array<Record<string, string | number>> = [];
  try {
    const { slug, token, recordId } = await seed(base);
    const api = `/api/v1/stations/${slug}`;
    const gqlQuery = encodeURIComponent(
      '{ nowPlaying { track { title artist } elapsedSeconds freshness { status ageSeconds } } currentBroadcast { asOf broadcast { id title status } } }',
    );
    const reads: Array<[string, string, boolean]> = [
      ['station document', api, true],
      ['schemas', `${api}/schemas`, true],
      ['content list (type=article&limit=25)', `${api}/content?type=article&limit=25`, true],
      ['content by id', `${api}/content/${recordId}`, true],
      ['content by slug', `${api}/content/article/by-slug/article-99`, true],
      ['schedule (default week)', `${api}/schedule`, true],
      ['programs', `${api}/programs`, true],
      ['broadcast/current', `${api}/broadcast/current`, true],
      ['now-playing', `${api}/now-playing`, true],
      ['now-playing?stream=', `${api}/now-playing?stream=mp3`, true],
      ['live', `${api}/live`, true],
      ['live?stream=', `${api}/live?stream=mp3`, true],
      ['track-history', `${api}/track-history`, true],
      ['weather', `${api}/weather`, true],
      ['traffic', `${api}/traffic`, true],
      ['schedule.ics', `${api}/schedule.ics`, true],
      ['GraphQL now-playing + current broadcast', `${api}/graphql?query=${gqlQuery}`, false],
    ];
    const auth = { authorization: `Bearer ${token}` };
    for (const [name, path, conditional] of reads) {
      if (ONLY && !ONLY.has(name)) continue;
      const url = `${base}${path}`;
      const first = await fetch(url, { headers: auth });
      if (first.status !== 200) throw new Error(`${name}: ${first.status} ${await first.text()}`);
      const bytes = Buffer.from(await first.arrayBuffer());
      const etag = first.headers.get('etag') ?? '"graphql"';
      const bodyFile = join(tmpdir(), `waveline-reads-${process.pid}.body`);
      writeFileSync(bodyFile, bytes);
      const barePort = await freePort();
      const bare = await startBare(bodyFile, etag, barePort);
      const bareUrl = `http://127.0.0.1:${barePort}/`;
      try {
        // Warm both (JIT, caches).
        await autocannon({ url, headers: auth, duration: 1, connections: 50 });
        await autocannon({ url: bareUrl, duration: 1, connections: 50 });
        for (const [kind, revalidate] of conditional
          ? ([
              ['200', false],
              ['304', true],
            ] as const)
          : ([['200', false]] as const)) {
          const ours: Figures[] = [];
          const theirs: Figures[] = [];
          for (let round = 0; round < ROUNDS; round++) {
            ours.push(await measure(url, auth, web.pid!, revalidate));
            theirs.push(await measure(bareUrl, {}, bare.pid!, revalidate));
          }
          const medians = (runs: Figures[]) => ({
            rps: median(runs.map((r) => r.rps)),
            p99: median(runs.map((r) => r.p99)),
            cpu: median(runs.map((r) => r.cpu)),
            user: median(runs.map((r) => r.user)),
          });
          const w = medians(ours);
          const b = medians(theirs);
          const errors = ours.reduce((n, r) => n + r.non2xx3xx, 0);
          rows.push({
            read: name,
            case: kind,
            'waveline req/s': Math.round(w.rps),
            'bare req/s': Math.round(b.rps),
            'req/s vs bare': `${((w.rps / b.rps) * 100).toFixed(1)}%`,
            'waveline p99 ms': w.p99,
            'bare p99 ms': b.p99,
            'CPU µs/req (waveline / bare)': `${w.cpu.toFixed(0)} / ${b.cpu.toFixed(0)}`,
            'CPU vs bare': `${(w.cpu / b.cpu).toFixed(2)}×`,
            // The kernel's part (mostly the socket write) is about the same for both; the difference is user space.
            'user-space µs/req (waveline / bare)': `${w.user.toFixed(1)} / ${b.user.toFixed(1)}`,
            ...(errors ? { 'non-2xx/3xx': errors } : {}),
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
    `\nlistener reads, ${new Date().toISOString().slice(0, 10)}, median of ${ROUNDS} alternating rounds of ${SECONDS}s per case, 50 connections, web and bare node:http each in their own process`,
  );
  console.log(
    '304 = the client revalidates with the ETag of its last 200 (as a polling app does); GraphQL answers carry no ETag (200 only).',
  );
  console.table(rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
