import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { uniqueSlug } from '../../support/factories.ts';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { wav } from '../media/helpers.ts';
import { cover, EPISODE_FIELDS, feedPath, fetchFeed } from './helpers.ts';

// docs/podcasts.md#the-podcasts-station-setting and docs/demo.md#post-adminv1import: a bundle's station carries the podcasts
// setting, validated like the admin PATCH; its cover names a media entry of the bundle (`imageKey`).
// A feed holds at most the 300 newest episodes.

describe('import bundles with a podcasts setting', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  async function bundle(podcasts: Record<string, unknown>, records = 1, size = 1400) {
    return {
      station: {
        slug: uniqueSlug('pci'),
        name: 'Imported FM',
        timezone: 'Europe/Berlin',
        podcasts: {
          enabled: true,
          episodeType: 'episode',
          author: 'Imported FM',
          ownerName: 'Owner',
          ownerEmail: 'owner@example.com',
          language: 'de',
          categories: [{ category: 'Music' }],
          imageKey: 'cover',
          ...podcasts,
        },
      },
      types: [{ key: 'episode', label: 'Episode', fields: EPISODE_FIELDS }],
      media: [
        { key: 'cover', mime: 'image/jpeg', data: (await cover(size, size, 'jpeg')).toString('base64') },
        { key: 'tone', mime: 'audio/wav', data: wav(1).toString('base64') },
      ],
      records: Array.from({ length: records }, (_, i) => ({
        id: randomUUID(),
        type: 'episode',
        values: { title: `Episode ${i + 1}`, audio: 'tone', episode: i + 1 },
        published: true,
      })),
    };
  }

  it('sets the cover from the bundle media entry named by imageKey: the feed serves at once', async () => {
    const body = await bundle({});
    const res = await admin(server.url, 'POST', '/import', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const cover = res.body.media.find((m: { key: string }) => m.key === 'cover');
    expect(res.body.station.podcasts).to.include({ enabled: true, episodeType: 'episode', imageVersionId: cover.versionId });
    const { feed } = await fetchFeed(server.url, feedPath(body.station.slug));
    expect(feed.itunesImage).to.match(/\/artwork\.jpg$/);
    expect(feed.items.map((i) => i.title)).to.deep.equal(['Episode 1']);
  });

  it('at most the 300 newest episodes by first publication', async function () {
    this.timeout(120_000);
    const body = await bundle({}, 301);
    const res = await admin(server.url, 'POST', '/import', body);
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).to.equal(201);
    const { feed } = await fetchFeed(server.url, feedPath(body.station.slug));
    expect(feed.items).to.have.length(300);
    const times = feed.items.map((i) => i.pubDate!.getTime());
    expect(times).to.deep.equal([...times].sort((a, b) => b - a));
    const oldest = res.body.records.reduce((a: { publishedAt: string }, b: { publishedAt: string }) =>
      a.publishedAt <= b.publishedAt ? a : b,
    );
    if (res.body.records.filter((r: { publishedAt: string }) => r.publishedAt === oldest.publishedAt).length === 1)
      expect(feed.items.map((i) => i.guid)).not.to.include(oldest.id);
  });

  const invalid: Array<[string, Record<string, unknown>, number | undefined, string]> = [
    ['an unknown imageKey', { imageKey: 'nope' }, undefined, 'station.podcasts.imageKey'],
    ['a cover under 1400 px', {}, 1000, 'station.podcasts.imageKey'],
    ['an unknown episode type', { episodeType: 'nothing' }, undefined, 'station.podcasts.episodeType'],
    ['a bad language tag', { language: 'deutsch!' }, undefined, 'station.podcasts.language'],
    ['an unknown category', { categories: [{ category: 'Radio' }] }, undefined, 'station.podcasts.categories.0.category'],
    ['enabled without an author', { author: null }, undefined, 'station.podcasts.author'],
  ];
  for (const [name, change, size, path] of invalid) {
    it(`400 naming the field, nothing imported: ${name}`, async () => {
      const body = await bundle(change, 1, size);
      const res = await admin(server.url, 'POST', '/import', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).to.include(path);
      expect(await server.svc.db('stations').where({ slug: body.station.slug }).first()).to.equal(undefined);
    });
  }
});
