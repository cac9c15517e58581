import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { uniqueSlug } from '../../support/factories.ts';

// A small but complete bundle: every part of the format once, fresh ids per call (ids are global).

export const picture = (): Promise<Buffer> =>
  sharp({ create: { width: 800, height: 400, channels: 3, background: '#2266aa' } })
    .png()
    .toBuffer();

export interface BundleIds {
  slug: string;
  news: string[];
  episode: string;
  presenters: string[];
  programs: string[];
  broadcasts: string[];
}

export function bundleIds(): BundleIds {
  return {
    slug: uniqueSlug('imp'),
    news: [randomUUID(), randomUUID(), randomUUID()],
    episode: randomUUID(),
    presenters: [randomUUID(), randomUUID()],
    programs: [randomUUID(), randomUUID()],
    broadcasts: [randomUUID(), randomUUID(), randomUUID(), randomUUID()],
  };
}

const newsType = {
  key: 'news',
  label: 'News',
  fields: [
    { key: 'title', label: 'Title', kind: 'text', required: true, maxLength: 200 },
    { key: 'slug', label: 'Slug', kind: 'text', required: true },
    {
      key: 'category',
      label: 'Category',
      kind: 'choices',
      choices: [
        { key: 'local', label: 'Local' },
        { key: 'music', label: 'Music' },
      ],
    },
    { key: 'image', label: 'Image', kind: 'media' },
    { key: 'related', label: 'Related', kind: 'content', targetType: 'news', multiple: true },
    { key: 'internal_note', label: 'Internal note', kind: 'text', private: true },
  ],
};

const episodeType = {
  key: 'episode',
  label: 'Episode',
  fields: [
    { key: 'title', label: 'Title', kind: 'text', required: true },
    {
      key: 'gallery',
      label: 'Gallery',
      kind: 'group',
      multiple: true,
      fields: [
        { key: 'photo', label: 'Photo', kind: 'media' },
        { key: 'caption', label: 'Caption', kind: 'text' },
      ],
    },
  ],
};

/**
 * Station, three credentials, two types, one image, four records (news 0 references news 1, which
 * comes later; news 2 stays a draft), two presenters, two programs, four broadcasts (two relative to
 * the import day, one absolute, one repeat listed before the broadcast it repeats) and a rundown.
 */
export function sampleBundle(ids: BundleIds, image: Buffer) {
  return {
    bundleVersion: 1,
    station: {
      slug: ids.slug,
      name: 'Import FM',
      timezone: 'Europe/Berlin',
      profile: { tagline: 'Imported', websiteUrls: ['https://import.example'], contactEmail: 'studio@import.example' },
    },
    credentials: [
      { scopes: ['listener:read'], label: 'web' },
      { scopes: ['push:register'], label: 'app' },
      { scopes: ['ingest:write'], label: 'encoder' },
    ],
    types: structuredClone([newsType, episodeType]),
    media: [{ key: 'cover', mime: 'image/png', data: image.toString('base64'), alt: 'A blue picture', credits: 'Test', focalX: 0.25 }],
    records: [
      {
        id: ids.news[0],
        type: 'news',
        values: { title: 'First', slug: 'first', category: 'local', image: 'cover', related: [ids.news[1]], internal_note: 'secret' },
        published: true,
      },
      {
        id: ids.news[1],
        type: 'news',
        values: { title: 'Second', slug: 'second', category: 'music' },
        media: [{ key: 'cover' }],
        published: true,
        related: { programIds: [ids.programs[0]] },
      },
      { id: ids.news[2], type: 'news', values: { title: 'Draft only', slug: 'draft' } },
      {
        id: ids.episode,
        type: 'episode',
        values: { title: 'Episode 1', gallery: [{ photo: 'cover', caption: 'Studio' }] },
        published: true,
      },
    ],
    presenters: [
      { id: ids.presenters[0], title: 'Ana Host' },
      { id: ids.presenters[1], title: 'Ben Voice' },
    ],
    programs: [
      {
        id: ids.programs[0],
        title: 'Morning Drive',
        description: 'Wake up',
        presenterIds: [ids.presenters[0]],
        slots: [{ weekday: 2, startTime: '06:00', durationMinutes: 360 }],
      },
      {
        id: ids.programs[1],
        title: 'Afternoon Mix',
        presenterIds: [ids.presenters[1]],
        slots: [{ weekday: 2, startTime: '12:00', durationMinutes: 480 }],
      },
    ],
    broadcasts: [
      {
        id: ids.broadcasts[3],
        programId: ids.programs[1],
        nature: 'repeat',
        repeatOfId: ids.broadcasts[1],
        relative: { dayOffset: 1, start: '12:00', durationMinutes: 480 },
      },
      {
        id: ids.broadcasts[0],
        programId: ids.programs[0],
        nature: 'live',
        relative: { dayOffset: 0, start: '06:00', durationMinutes: 360 },
      },
      {
        id: ids.broadcasts[1],
        programId: ids.programs[1],
        nature: 'live',
        relative: { dayOffset: 0, start: '12:00', durationMinutes: 480 },
      },
      {
        id: ids.broadcasts[2],
        programId: ids.programs[0],
        title: 'Special',
        nature: 'prerecorded',
        startsAt: '2026-03-11T06:00:00+01:00',
        endsAt: '2026-03-11T11:00:00Z',
      },
    ],
    rundowns: [
      {
        broadcastId: ids.broadcasts[0],
        items: [
          { kind: 'jingle', title: 'Station ID', durationSeconds: 10 },
          { kind: 'track', artist: 'Lumen Fields', title: 'Northern Lights', durationSeconds: 240 },
          { kind: 'talk', title: 'News', offsetSeconds: 4 * 3600, durationSeconds: 3600 },
        ],
      },
    ],
  };
}
