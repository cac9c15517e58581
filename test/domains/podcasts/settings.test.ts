import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { createStation } from '../../support/factories.ts';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { uploaded } from '../media/helpers.ts';
import { APPLE_PODCAST_CATEGORIES } from '../../../src/domains/podcasts/categories.ts';
import { cover, EPISODE_FIELDS, patchPodcasts, putEpisodeType, setting, uploadCover } from './helpers.ts';

// docs/podcasts.md#the-podcasts-station-setting: the `podcasts` station setting — PATCH (and an import bundle) replaces the
// whole object and validates it; errors are 400 naming the field.

type Issue = { path: string; code: string; message: string };
const issuesOf = (body: { error: { issues?: Issue[] } }) => body.error.issues ?? [];

describe('the podcasts station setting', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  async function stationWithTypeAndCover() {
    const station = await createStation(server.url);
    await putEpisodeType(server.url, station.id);
    const imageVersionId = await uploadCover(server.url, station.id);
    return { station, imageVersionId };
  }

  async function refused(stationId: string, podcasts: Record<string, unknown>, path: string) {
    const res = await patchPodcasts(server.url, stationId, podcasts);
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    expect(
      issuesOf(res.body).map((i) => i.path),
      JSON.stringify(res.body),
    ).to.include(path);
  }

  it('defaults: off, not explicit, every other field null (categories empty); shown in the admin view', async () => {
    const station = await createStation(server.url);
    expect(station.podcasts).to.deep.equal({
      enabled: false,
      episodeType: null,
      author: null,
      ownerName: null,
      ownerEmail: null,
      language: null,
      explicit: false,
      categories: [],
      imageVersionId: null,
      copyright: null,
    });
  });

  it('a valid setting is stored; PATCH replaces the whole object (fields not sent go back to their defaults)', async () => {
    const { station, imageVersionId } = await stationWithTypeAndCover();
    const res = await patchPodcasts(server.url, station.id, setting(imageVersionId.toUpperCase(), { copyright: '© Test' }));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.podcasts).to.include({ enabled: true, episodeType: 'episode', imageVersionId, copyright: '© Test', explicit: false });
    const replaced = await patchPodcasts(server.url, station.id, { enabled: false, author: 'Only this' });
    expect(replaced.status).to.equal(200);
    expect(replaced.body.podcasts).to.deep.include({
      enabled: false,
      author: 'Only this',
      episodeType: null,
      imageVersionId: null,
      categories: [],
    });
    expect((await admin(server.url, 'GET', `/stations/${station.id}`)).body.podcasts.author).to.equal('Only this');
  });

  it('enabled needs every field but explicit and copyright: each missing one is 400 naming it', async () => {
    const { station, imageVersionId } = await stationWithTypeAndCover();
    for (const field of ['episodeType', 'author', 'ownerName', 'ownerEmail', 'language', 'categories', 'imageVersionId']) {
      const podcasts: Record<string, unknown> = setting(imageVersionId);
      delete podcasts[field];
      await refused(station.id, podcasts, `podcasts.${field}`);
    }
    const ok = setting(imageVersionId) as Record<string, unknown>;
    delete ok.explicit;
    delete ok.copyright;
    expect((await patchPodcasts(server.url, station.id, ok)).status).to.equal(200);
  });

  it('the episode type: unknown, or without a `title` text field and an `audio` media field, is 400 naming episodeType', async () => {
    const { station, imageVersionId } = await stationWithTypeAndCover();
    await refused(station.id, setting(imageVersionId, { episodeType: 'nothing' }), 'podcasts.episodeType');
    await putEpisodeType(server.url, station.id, 'no_audio', [{ key: 'title', label: 'Title', kind: 'text' }]);
    await refused(station.id, setting(imageVersionId, { episodeType: 'no_audio' }), 'podcasts.episodeType');
    await putEpisodeType(server.url, station.id, 'audio_text', [
      { key: 'title', label: 'Title', kind: 'text' },
      { key: 'audio', label: 'Audio', kind: 'text' },
    ]);
    await refused(station.id, setting(imageVersionId, { episodeType: 'audio_text' }), 'podcasts.episodeType');
    await putEpisodeType(server.url, station.id, 'rich_title', [{ ...EPISODE_FIELDS[0], kind: 'rich_text' }, EPISODE_FIELDS[2]]);
    await refused(station.id, setting(imageVersionId, { episodeType: 'rich_title' }), 'podcasts.episodeType');
    const other = await createStation(server.url);
    await refused(other.id, setting(imageVersionId, { enabled: false }), 'podcasts.imageVersionId');
  });

  it('the image: a square JPEG or PNG of 1400–3000 px, of this station; anything else is 400 naming imageVersionId', async () => {
    const { station } = await stationWithTypeAndCover();
    const up = async (bytes: Buffer, mime: string) => (await uploaded(server.url, station.id, bytes, mime)).versionId;
    await refused(station.id, setting(await up(await cover(1400, 1401), 'image/png')), 'podcasts.imageVersionId');
    await refused(station.id, setting(await up(await cover(1399), 'image/png')), 'podcasts.imageVersionId');
    await refused(station.id, setting(await up(await cover(3001, 3001, 'jpeg'), 'image/jpeg')), 'podcasts.imageVersionId');
    await refused(station.id, setting(await up(await cover(1400, 1400, 'webp'), 'image/webp')), 'podcasts.imageVersionId');
    await refused(station.id, setting('7a4c8a5e-0000-4000-8000-000000000000'), 'podcasts.imageVersionId');
    expect((await patchPodcasts(server.url, station.id, setting(await up(await cover(3000, 3000, 'jpeg'), 'image/jpeg')))).status).to.equal(
      200,
    );
  });

  it('the language: a BCP 47 tag (bcp-47’s parser), else 400 naming language', async () => {
    const { station, imageVersionId } = await stationWithTypeAndCover();
    for (const language of ['de', 'en-GB', 'zh-Hant-TW', 'es-419']) {
      const res = await patchPodcasts(server.url, station.id, setting(imageVersionId, { language }));
      expect(res.status, language).to.equal(200);
    }
    for (const language of ['english', 'en_GB', 'x-private', 'de-', '12'])
      await refused(station.id, setting(imageVersionId, { language }), 'podcasts.language');
  });

  it('categories: 1–3 names from Apple’s list (subcategories of their own category), else 400 naming the entry', async () => {
    const { station, imageVersionId } = await stationWithTypeAndCover();
    await refused(station.id, setting(imageVersionId, { categories: [{ category: 'Radio' }] }), 'podcasts.categories.0.category');
    await refused(
      station.id,
      setting(imageVersionId, { categories: [{ category: 'News' }, { category: 'Music', subcategory: 'Politics' }] }),
      'podcasts.categories.1.subcategory',
    );
    await refused(station.id, setting(imageVersionId, { categories: [] }), 'podcasts.categories');
    const four = ['Arts', 'News', 'Music', 'Comedy'].map((category) => ({ category }));
    await refused(station.id, setting(imageVersionId, { categories: four }), 'podcasts.categories');
    const ok = [{ category: 'TV & Film', subcategory: 'After Shows' }, { category: 'Health & Fitness' }, { category: 'True Crime' }];
    expect((await patchPodcasts(server.url, station.id, setting(imageVersionId, { categories: ok }))).status).to.equal(200);
    expect(APPLE_PODCAST_CATEGORIES.News).to.include('Daily News');
  });

  it('unknown fields and bad shapes are 400 (explicit must be a boolean; ownerEmail an e-mail address)', async () => {
    const { station, imageVersionId } = await stationWithTypeAndCover();
    await refused(station.id, setting(imageVersionId, { explicit: 'yes' }), 'podcasts.explicit');
    await refused(station.id, setting(imageVersionId, { ownerEmail: 'not an address' }), 'podcasts.ownerEmail');
    const extra = await patchPodcasts(server.url, station.id, { ...setting(imageVersionId), feedUrl: 'x' });
    expect(extra.status).to.equal(400);
  });
});
