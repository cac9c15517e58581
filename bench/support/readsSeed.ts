// The station bench:reads reads from (also bench:reads' BENCH_COMPARE_DIR web, an older checkout: it uses
// only admin calls that checkout knows too): 100 articles, a week of broadcasts (one on air), a track,
// weather and traffic; and a second station publishing podcasts (20 episodes, one program).
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { BENCH_ENV } from '../support.ts';

const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;

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

/** Seeds a station through the admin API of the web at `base`; the slug, a listener token and the last record id. */
export async function seed(base: string): Promise<{
  slug: string;
  token: string;
  recordId: string;
  streams: boolean;
  podcastSlug: string | null;
  podcastProgramId: string | null;
}> {
  const admin = (method: string, path: string, body?: unknown) => call(base, method, `/admin/v1${path}`, body);
  const slug = `bench-${Date.now().toString(36)}`;
  const feeds = { weather: true, traffic: true };
  const station = await admin('POST', '/stations', {
    slug,
    name: 'Bench FM',
    timezone: 'Europe/Berlin',
    rundownFollowing: false,
    modules: feeds,
    entitlements: feeds,
    redistribution: feeds,
    profile: {
      tagline: 'Benchmarks all day',
      streamUrls: [{ label: 'MP3', url: 'https://stream.example/live.mp3', mime: 'audio/mpeg', bitrateKbps: 128 }],
    },
  });
  // Listener time and up next: a stream with a latency, up next on. An older checkout compared
  // by BENCH_COMPARE_DIR refuses these settings (400): its reads of `stream=` and `live` are then skipped.
  const streams = await admin('PATCH', `/stations/${station.id}`, {
    upNext: { enabled: true, count: 2 },
    profile: {
      tagline: 'Benchmarks all day',
      streamUrls: [
        { label: 'MP3', url: 'https://stream.example/live.mp3', mime: 'audio/mpeg', bitrateKbps: 128, key: 'mp3', latencySeconds: 6 },
      ],
    },
  }).then(
    () => true,
    () => false,
  );
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
  const podcasts = await seedPodcasts(base, `${slug}-pod`).catch(() => null);
  return { slug, token, recordId, streams, podcastSlug: podcasts?.slug ?? null, podcastProgramId: podcasts?.programId ?? null };
}

/** A one-second 8 kHz 8-bit WAV: every episode's audio. */
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

/** A station publishing podcasts (one import bundle, as bench:podcasts seeds, with 20 episodes) and a program of it. */
async function seedPodcasts(base: string, slug: string): Promise<{ slug: string; programId: string }> {
  const cover = await sharp({ create: { width: 1400, height: 1400, channels: 3, background: '#1d3557' } })
    .jpeg()
    .toBuffer();
  const result = await call(base, 'POST', '/admin/v1/import', {
    station: {
      slug,
      name: 'Bench Pods',
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
        ],
      },
    ],
    media: [
      { key: 'cover', mime: 'image/jpeg', data: cover.toString('base64') },
      { key: 'audio', mime: 'audio/wav', data: wav().toString('base64') },
    ],
    records: Array.from({ length: 20 }, (_, i) => ({
      id: randomUUID(),
      type: 'episode',
      values: { title: `Episode ${i + 1}`, description: `What we talked about in episode ${i + 1}. `.repeat(4), audio: 'audio' },
      published: true,
    })),
  });
  const programId = randomUUID();
  await call(base, 'PUT', `/admin/v1/stations/${result.station.id}/programs/${programId}`, { title: 'Pod Show', description: 'Talk' });
  return { slug, programId };
}
