import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { parseFeed, type FeedObject } from 'podcast-partytime';
import sharp from 'sharp';
import { admin } from '../../support/http.ts';
import { createStation, type TestStation } from '../../support/factories.ts';
import { uploaded, wav } from '../media/helpers.ts';
import { get, type HttpReply } from '../radiodns/helpers.ts';

// Podcasts through the admin API and real HTTP: a station with an episode type, a cover and episodes.

export { get, type HttpReply };

export const EPISODE_FIELDS = [
  { key: 'title', label: 'Title', kind: 'text', required: true },
  { key: 'description', label: 'Description', kind: 'rich_text' },
  { key: 'audio', label: 'Audio', kind: 'media', required: true },
  { key: 'image', label: 'Image', kind: 'media' },
  { key: 'season', label: 'Season', kind: 'number' },
  { key: 'episode', label: 'Episode', kind: 'number' },
  {
    key: 'episode_type',
    label: 'Episode type',
    kind: 'choices',
    choices: ['full', 'trailer', 'bonus'].map((key) => ({ key, label: key })),
  },
  { key: 'explicit', label: 'Explicit', kind: 'boolean' },
];

/** A square (or not) picture of one colour. */
export const cover = (width: number, height = width, format: 'png' | 'jpeg' | 'webp' = 'png'): Promise<Buffer> =>
  sharp({ create: { width, height, channels: 3, background: { r: 30, g: 60, b: 200 } } })
    .toFormat(format)
    .toBuffer();

export async function putEpisodeType(url: string, stationId: string, key = 'episode', fields: unknown[] = EPISODE_FIELDS) {
  const res = await admin(url, 'PUT', `/stations/${stationId}/content-types/${key}`, { label: 'Episode', fields });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
}

export const uploadCover = async (url: string, stationId: string, size = 1400, mime: 'image/png' | 'image/jpeg' = 'image/png') =>
  (await uploaded(url, stationId, await cover(size, size, mime === 'image/png' ? 'png' : 'jpeg'), mime)).versionId;

/** Uploads a WAV of `seconds`; the receipt with the file's `size` in bytes. */
export async function uploadAudio(url: string, stationId: string, seconds = 2.6) {
  const bytes = wav(seconds);
  return { ...(await uploaded(url, stationId, bytes, 'audio/wav')), size: bytes.length, bytes };
}

export const patchPodcasts = (url: string, stationId: string, podcasts: Record<string, unknown>) =>
  admin(url, 'PATCH', `/stations/${stationId}`, { podcasts });

export function setting(imageVersionId: string, extra: Record<string, unknown> = {}) {
  return {
    enabled: true,
    episodeType: 'episode',
    author: 'Waveline Test FM',
    ownerName: 'Test Owner',
    ownerEmail: 'owner@example.com',
    language: 'en-GB',
    categories: [{ category: 'Music', subcategory: 'Music Commentary' }, { category: 'News' }],
    imageVersionId,
    ...extra,
  };
}

export interface PodcastStation {
  station: TestStation;
  imageVersionId: string;
}

/** A station with podcasts on: the episode type, a 1400 px PNG cover, the setting. */
export async function podcastStation(url: string, extra: Record<string, unknown> = {}, stationOverrides: Record<string, unknown> = {}) {
  const station = await createStation(url, { name: 'Waveline Test FM', ...stationOverrides });
  await putEpisodeType(url, station.id);
  const imageVersionId = await uploadCover(url, station.id);
  const res = await patchPodcasts(url, station.id, setting(imageVersionId, extra));
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return { station, imageVersionId };
}

/** Saves and publishes an episode; returns its id. */
export async function publishEpisode(
  url: string,
  stationId: string,
  values: Record<string, unknown>,
  options: { id?: string; programIds?: string[]; document?: unknown } = {},
): Promise<string> {
  const id = options.id ?? randomUUID();
  const saved = await admin(url, 'PUT', `/stations/${stationId}/records/${id}`, {
    type: 'episode',
    values,
    ...(options.document ? { document: options.document } : {}),
    ...(options.programIds ? { related: { programIds: options.programIds } } : {}),
  });
  expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
  const published = await admin(url, 'POST', `/stations/${stationId}/records/${id}/publish`, {});
  expect(published.status, JSON.stringify(published.body)).to.equal(200);
  return id;
}

export async function putProgram(
  url: string,
  stationId: string,
  body: Record<string, unknown> = {},
  id: string = randomUUID(),
): Promise<string> {
  const res = await admin(url, 'PUT', `/stations/${stationId}/programs/${id}`, {
    title: 'Morning Show',
    presenterIds: [],
    slots: [],
    ...body,
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return id;
}

export const feedPath = (slug: string, programId?: string) =>
  programId ? `/podcasts/${slug}/programs/${programId}/feed.xml` : `/podcasts/${slug}/feed.xml`;

/** GET a feed, expect 200, and parse it with podcast-partytime (the Podcast Index's parser). */
export async function fetchFeed(url: string, path: string): Promise<{ reply: HttpReply; feed: FeedObject }> {
  const reply = await get(url, path);
  expect(reply.status, reply.text).to.equal(200);
  const feed = parseFeed(reply.text);
  expect(feed, 'podcast-partytime parses the feed').not.to.equal(null);
  return { reply, feed: feed as FeedObject };
}
