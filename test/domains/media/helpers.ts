import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import sharp from 'sharp';
import { ADMIN_TOKEN } from '../../support/env.ts';
import { admin, request, type Reply } from '../../support/http.ts';

// Media through the admin API, the way the editorial system loads it, and pictures made with sharp.

export function mediaQuery(query: Record<string, string | number> = {}): string {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return search.size ? `?${search}` : '';
}

/** POST /admin/v1/stations/{id}/media with raw bytes; `contentType` null sends none. */
export function upload(
  url: string,
  stationId: string,
  bytes: Buffer,
  contentType: string | null,
  query: Record<string, string | number> = {},
  headers: Record<string, string> = {},
): Promise<Reply> {
  return request(url, 'POST', `/admin/v1/stations/${stationId}/media${mediaQuery(query)}`, {
    token: ADMIN_TOKEN,
    headers: { ...(contentType === null ? {} : { 'content-type': contentType }), ...headers },
    body: bytes,
  });
}

export async function uploaded(
  url: string,
  stationId: string,
  bytes: Buffer,
  contentType: string,
  query: Record<string, string | number> = {},
) {
  const res = await upload(url, stationId, bytes, contentType, query);
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body as {
    assetId: string;
    versionId: string;
    kind: string;
    mime: string;
    width: number | null;
    height: number | null;
    duration: number | null;
  };
}

export const solid = (width: number, height: number, background = '#336699') =>
  sharp({ create: { width, height, channels: 3, background } });

export const png = (width: number, height: number, background?: string): Promise<Buffer> =>
  solid(width, height, background).png().toBuffer();
export const jpeg = (width: number, height: number, background?: string): Promise<Buffer> =>
  solid(width, height, background).jpeg().toBuffer();

/** A white picture with one red square of `block` px centred on (cx, cy). */
export function withRedBlock(width: number, height: number, cx: number, cy: number, block = 200): Promise<Buffer> {
  return solid(width, height, '#ffffff')
    .composite([
      {
        input: { create: { width: block, height: block, channels: 3, background: '#ff0000' } },
        left: Math.round(cx - block / 2),
        top: Math.round(cy - block / 2),
      },
    ])
    .png()
    .toBuffer();
}

/** Pixel reader for an encoded picture. */
export async function pixels(bytes: Buffer) {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number): [number, number, number] => {
    const i = (y * info.width + x) * info.channels;
    return [data[i], data[i + 1], data[i + 2]];
  };
  const isRed = (x: number, y: number): boolean => {
    const [r, g, b] = at(x, y);
    return r > 200 && g < 60 && b < 60;
  };
  let red = 0;
  for (let y = 0; y < info.height; y++) for (let x = 0; x < info.width; x++) if (isRed(x, y)) red++;
  return { width: info.width, height: info.height, at, isRed, red };
}

/** A published record whose `media` list references the versions; returns the record id. */
export async function publishWithMedia(url: string, stationId: string, versionIds: string[], id = randomUUID()): Promise<string> {
  const type = await admin(url, 'PUT', `/stations/${stationId}/content-types/story`, {
    label: 'Story',
    fields: [{ key: 'title', label: 'Title', kind: 'text' }],
  });
  expect(type.status, JSON.stringify(type.body)).to.equal(200);
  const saved = await admin(url, 'PUT', `/stations/${stationId}/records/${id}`, {
    type: 'story',
    values: { title: 'With media' },
    media: versionIds.map((versionId) => ({ versionId })),
  });
  expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
  const pub = await admin(url, 'POST', `/stations/${stationId}/records/${id}/publish`, {});
  expect(pub.status, JSON.stringify(pub.body)).to.equal(200);
  return id;
}

export const unpublish = (url: string, stationId: string, recordId: string) =>
  admin(url, 'POST', `/stations/${stationId}/records/${recordId}/unpublish`);

/** GET/HEAD of public media bytes: no credential, the body as raw bytes. */
export async function fetchMedia(url: string, path: string, init: { method?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(url + path, { method: init.method ?? 'GET', headers: init.headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, json: () => JSON.parse(bytes.toString('utf8')) };
}

export const mediaPath = (stationId: string, versionId: string, variant?: string): string =>
  `/api/media/public/${stationId}/${versionId}${variant ? `/${variant}` : ''}`;

/** A PCM WAV of `seconds` of silence. */
export function wav(seconds: number, sampleRate = 8000, channels = 1, bitsPerSample = 16): Buffer {
  const byteRate = (sampleRate * channels * bitsPerSample) / 8;
  const dataSize = Math.round(seconds * byteRate);
  const b = Buffer.alloc(44 + dataSize);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(36 + dataSize, 4);
  b.write('WAVE', 8, 'latin1');
  b.write('fmt ', 12, 'latin1');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(channels, 22);
  b.writeUInt32LE(sampleRate, 24);
  b.writeUInt32LE(byteRate, 28);
  b.writeUInt16LE((channels * bitsPerSample) / 8, 32);
  b.writeUInt16LE(bitsPerSample, 34);
  b.write('data', 36, 'latin1');
  b.writeUInt32LE(dataSize, 40);
  return b;
}

/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz stereo frames (417 bytes each), optionally after an ID3 tag. */
export function mp3(frames: number, options: { id3?: boolean } = {}): Buffer {
  const frame = () => {
    const f = Buffer.alloc(417);
    f.set([0xff, 0xfb, 0x90, 0x00]);
    return f;
  };
  const parts: Buffer[] = [];
  if (options.id3) {
    const tag = Buffer.alloc(10 + 20);
    tag.write('ID3', 0, 'latin1');
    tag.set([4, 0, 0, 0, 0, 0, 20], 3);
    parts.push(tag);
  }
  for (let i = 0; i < frames; i++) parts.push(frame());
  return Buffer.concat(parts);
}

/** A FLAC stream header: "fLaC" and a STREAMINFO block saying `totalSamples` at `sampleRate` (16-bit stereo). */
export function flac(sampleRate: number, totalSamples: number): Buffer {
  const b = Buffer.alloc(8 + 34);
  b.write('fLaC', 0, 'latin1');
  b.set([0x80, 0, 0, 34], 4); // last block, type 0 (STREAMINFO), 34 bytes
  const d = 8;
  const channels = 2;
  const bps = 16;
  b[d + 10] = sampleRate >> 12;
  b[d + 11] = (sampleRate >> 4) & 0xff;
  b[d + 12] = ((sampleRate & 0x0f) << 4) | ((channels - 1) << 1) | ((bps - 1) >> 4);
  b[d + 13] = (((bps - 1) & 0x0f) << 4) | Math.floor(totalSamples / 2 ** 32);
  b.writeUInt32BE(totalSamples % 2 ** 32, d + 14);
  return b;
}
