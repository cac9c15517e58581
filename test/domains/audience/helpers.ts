import { expect } from 'chai';
import { request, type Reply } from '../../support/http.ts';
import { ingest } from '../../support/ingest.ts';
import type { Services } from '../../../src/services.ts';

export const LISTENERS_PATH = '/api/v1/integrations/listeners';

export const STREAMS = [
  { label: 'MP3', url: 'https://stream.example.org/live.mp3', key: 'mp3', latencySeconds: 6 },
  { label: 'HLS', url: 'https://stream.example.org/live.m3u8', key: 'hls', latencySeconds: 30 },
];

/** POST listener samples as a CDN would: `?stationSlug=`, the ingest credential, JSON body. */
export function pushSamples(baseUrl: string, station: { slug: string }, token: string, body: unknown): Promise<Reply> {
  return request(baseUrl, 'POST', `${LISTENERS_PATH}?stationSlug=${encodeURIComponent(station.slug)}`, { token, json: body });
}

/** Reports a play through the ingest route. */
export async function play(
  baseUrl: string,
  station: { slug: string },
  token: string,
  title: string,
  at: number,
  extra: Record<string, unknown> = {},
) {
  const res = await ingest(baseUrl, station, token, { observedAt: at, artist: 'Artist', title, isPlaying: true, ...extra });
  expect(res.status, res.text).to.equal(200);
}

export const storedSamples = (svc: Services, stationId: string) =>
  svc
    .db('listener_samples')
    .where({ station_id: stationId })
    .orderBy(['stream_key', 'at'])
    .select('stream_key', 'at', 'listeners', 'source');

/** RFC 4180 text (header row first) as records. */
export function parseCsv(text: string): Array<Record<string, string>> {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') ((field += '"'), i++);
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') (row.push(field), (field = ''));
    else if (ch === '\r' && text[i + 1] === '\n') {
      (row.push(field), rows.push(row), (row = []), (field = ''), i++);
    } else field += ch;
  }
  if (field || row.length) (row.push(field), rows.push(row));
  const [header, ...records] = rows;
  return records.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
}
