import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { admin, request } from '../../support/http.ts';
import { createToken } from '../../support/factories.ts';
import { gql } from '../../graphql/helpers.ts';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { fetchMedia } from '../media/helpers.ts';
import { parseXml, kid, kids } from '../radiodns/helpers.ts';
import { uuidV5 } from '../../../src/domains/podcasts/model.ts';
import {
  fetchFeed,
  feedPath,
  get,
  podcastStation,
  publishEpisode,
  putProgram,
  uploadAudio,
  uploadCover,
  patchPodcasts,
  setting,
} from './helpers.ts';

// docs/podcasts.md#the-feeds: the station and program feeds as podcast apps read them
// (parsed with podcast-partytime, the Podcast Index's parser) and as bytes.

const ITUNES = 'http://www.itunes.com/dtds/podcast-1.0.dtd';
const PODCAST = 'https://podcastindex.org/namespace/1.0';
const ATOM = 'http://www.w3.org/2005/Atom';
const RFC2822 = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} \+0000$/;

describe('podcast feeds', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('the station feed: RSS 2.0 with the itunes, podcast and atom namespaces, every channel and item element as specified', async () => {
    const { station, imageVersionId } = await podcastStation(
      server.url,
      { copyright: '© 2026 Test FM' },
      {
        profile: { description: 'Radio for tests.', websiteUrls: ['https://test.example/'] },
      },
    );
    const first = await uploadAudio(server.url, station.id, 2.6);
    const second = await uploadAudio(server.url, station.id, 3.4);
    const squareJpeg = await uploadCover(server.url, station.id, 1400, 'image/jpeg');
    const older = await publishEpisode(server.url, station.id, { title: 'Episode one', audio: first.versionId, season: 1, episode: 1 });
    const newer = await publishEpisode(server.url, station.id, {
      title: 'Episode two',
      description: 'The second one.',
      audio: second.versionId,
      image: squareJpeg,
      season: 1,
      episode: 2,
      episode_type: 'bonus',
      explicit: true,
    });

    const { reply, feed } = await fetchFeed(server.url, feedPath(station.slug));
    expect(reply.headers['content-type']).to.equal('application/rss+xml; charset=utf-8');
    expect(reply.headers['cache-control']).to.equal('public, max-age=300');
    expect(reply.headers.etag).to.equal(`"${createHash('sha256').update(reply.body).digest('hex')}"`);

    const base = server.svc.config.publicBaseUrl;
    const feedUrl = `${base}/podcasts/${station.slug}/feed.xml`;
    expect(feed.title).to.equal('Waveline Test FM');
    expect(feed.link).to.equal('https://test.example/');
    expect(feed.description).to.equal('Radio for tests.');
    expect(feed.language).to.equal('en-GB');
    expect(feed.copyright).to.equal('© 2026 Test FM');
    expect(feed.author).to.equal('Waveline Test FM');
    expect(feed.owner).to.deep.equal({ name: 'Test Owner', email: 'owner@example.com' });
    expect(feed.itunesImage).to.equal(`${base}/podcasts/${station.slug}/artwork.png`);
    expect(feed.itunesCategory).to.have.members(['Music > Music Commentary', 'News']);
    expect(feed.explicit).to.equal(false);
    expect(feed.itunesType).to.equal('episodic');
    expect(feed.guid).to.equal(uuidV5(feedUrl.replace(/^https?:\/\//, ''), 'ead4c236-bf58-58c6-a2c6-a6b28d128cb6'));
    expect(feed.pubsub?.self).to.equal(feedUrl);

    expect(feed.items.map((i) => i.guid)).to.deep.equal([newer, older]);
    const [two, one] = feed.items;
    expect(two.title).to.equal('Episode two');
    expect(two.description).to.equal('The second one.');
    expect(one.description, 'no description: the title').to.equal('Episode one');
    expect(two.enclosure).to.deep.equal({
      url: `${base}/api/media/public/${station.id}/${second.versionId}`,
      length: second.size,
      type: 'audio/wav',
    });
    expect(two.duration).to.equal(3);
    expect(one.duration).to.equal(3);
    expect(two.itunesEpisode).to.equal(2);
    expect(two.itunesSeason).to.equal(1);
    expect(two.itunesEpisodeType).to.equal('bonus');
    expect(one.itunesEpisodeType).to.equal('full');
    expect(two.explicit).to.equal(true);
    expect(one.explicit).to.equal(false);
    expect(two.itunesImage).to.equal(`${base}/api/media/public/${station.id}/${squareJpeg}`);
    expect(one.itunesImage).to.equal(undefined);

    // The bytes: element names and namespaces, guid attributes, RFC 2822 dates.
    const rss = parseXml(reply.text);
    expect(rss.name).to.equal('rss');
    expect(rss.attrs.version).to.equal('2.0');
    const channel = kid(rss, 'channel');
    const ns = (name: string) => channel.children.filter((c) => c.name === name).map((c) => c.ns);
    expect(ns('guid')).to.deep.equal([PODCAST]);
    expect(ns('link')).to.include(ATOM);
    for (const name of ['author', 'owner', 'image', 'category', 'explicit', 'type']) expect(ns(name), name).to.include(ITUNES);
    expect(kid(channel, 'lastBuildDate').text).to.match(RFC2822);
    const items = kids(channel, 'item');
    for (const item of items) {
      expect(kid(item, 'pubDate').text).to.match(RFC2822);
      expect(kid(item, 'guid').attrs.isPermaLink).to.equal('false');
    }
    expect(kid(items[0], 'enclosure').attrs.length).to.equal(String(two.enclosure.length));
    expect(imageVersionId).to.be.a('string');
  });

  it('304 for a matching If-None-Match (a list too); the same bytes again from memory', async () => {
    const { station } = await podcastStation(server.url);
    const path = feedPath(station.slug);
    const first = await get(server.url, path);
    expect(first.status).to.equal(200);
    const again = await get(server.url, path);
    expect(again.text).to.equal(first.text);
    expect(again.headers.etag).to.equal(first.headers.etag);
    const revalidated = await get(server.url, path, { 'if-none-match': `"other", ${first.headers.etag as string}` });
    expect(revalidated.status).to.equal(304);
    expect(revalidated.body.length).to.equal(0);
    expect(revalidated.headers['cache-control']).to.equal('public, max-age=300');
    expect(revalidated.headers.etag).to.equal(first.headers.etag);
  });

  it('404: podcasts off, unknown, inactive or public-offline station; unknown, malformed or another station’s program', async () => {
    const { station } = await podcastStation(server.url);
    const other = await podcastStation(server.url);
    const otherProgram = await putProgram(server.url, other.station.id);
    expect((await get(server.url, feedPath(station.slug))).status).to.equal(200);
    expect((await get(server.url, feedPath('no-such-station-here'))).status).to.equal(404);
    expect((await get(server.url, feedPath('Not_A_Slug'))).status).to.equal(404);
    expect((await get(server.url, feedPath(station.slug, otherProgram))).status).to.equal(404);
    expect((await get(server.url, feedPath(station.slug, '7a4c8a5e-0000-4000-8000-000000000000'))).status).to.equal(404);
    expect((await get(server.url, feedPath(station.slug, 'not-a-uuid'))).status).to.equal(404);
    expect((await get(server.url, `/podcasts/${station.slug}/artwork.png`)).status).to.equal(200);

    for (const change of [{ active: false }, { publicOnline: false }]) {
      const { station: s } = await podcastStation(server.url);
      expect((await get(server.url, feedPath(s.slug))).status).to.equal(200);
      expect((await admin(server.url, 'PATCH', `/stations/${s.id}`, change)).status).to.equal(200);
      expect((await get(server.url, feedPath(s.slug))).status, JSON.stringify(change)).to.equal(404);
      expect((await get(server.url, `/podcasts/${s.slug}/artwork.png`)).status).to.equal(404);
    }
    expect((await patchPodcasts(server.url, station.id, { enabled: false })).status).to.equal(200);
    const off = await get(server.url, feedPath(station.slug));
    expect(off.status).to.equal(404);
    expect(JSON.parse(off.text).error.code).to.equal('NOT_FOUND');
    expect((await get(server.url, `/podcasts/${station.slug}/artwork.png`)).status).to.equal(404);
  });

  it('the program feed: the episodes related to the program, its title and description; a program without episodes has no items', async () => {
    const { station } = await podcastStation(server.url, {}, { profile: { tagline: 'The tagline.' } });
    const morning = await putProgram(server.url, station.id, { title: 'Morning Show', description: 'Wake up.' });
    const quiet = await putProgram(server.url, station.id, { title: 'Quiet Hour' });
    const audio = await uploadAudio(server.url, station.id);
    const inMorning = await publishEpisode(
      server.url,
      station.id,
      { title: 'Morning 1', audio: audio.versionId },
      { programIds: [morning] },
    );
    await publishEpisode(server.url, station.id, { title: 'Elsewhere', audio: audio.versionId });

    const { feed } = await fetchFeed(server.url, feedPath(station.slug, morning));
    expect(feed.title).to.equal('Morning Show – Waveline Test FM');
    expect(feed.description).to.equal('Wake up.');
    expect(feed.items.map((i) => i.guid)).to.deep.equal([inMorning]);
    expect(feed.pubsub?.self).to.equal(`${server.svc.config.publicBaseUrl}/podcasts/${station.slug}/programs/${morning}/feed.xml`);

    const empty = await fetchFeed(server.url, feedPath(station.slug, quiet.toUpperCase()));
    expect(empty.feed.title).to.equal('Quiet Hour – Waveline Test FM');
    expect(empty.feed.description, 'no program description: the station feed’s (tagline)').to.equal('The tagline.');
    expect(empty.feed.items).to.have.length(0);
    expect((await fetchFeed(server.url, feedPath(station.slug))).feed.items).to.have.length(2);
  });

  it('only records of the episode type whose audio is an audio version are episodes; a record’s document stands in for a missing description', async () => {
    const { station, imageVersionId } = await podcastStation(server.url);
    const audio = await uploadAudio(server.url, station.id);
    const withDocument = await publishEpisode(
      server.url,
      station.id,
      { title: 'Documented', audio: audio.versionId },
      {
        document: {
          version: 1,
          mode: 'blocks',
          blocks: [
            {
              id: 'a',
              type: 'paragraph',
              content: [
                { text: 'First ', marks: [] },
                { text: 'paragraph.', marks: [] },
              ],
            },
            { id: 'b', type: 'paragraph', content: [{ text: 'Second.', marks: [] }] },
          ],
        },
      },
    );
    await publishEpisode(server.url, station.id, { title: 'A picture, not audio', audio: imageVersionId });
    const { reply, feed } = await fetchFeed(server.url, feedPath(station.slug));
    expect(feed.items.map((i) => i.guid)).to.deep.equal([withDocument]);
    expect(feed.items[0].description).to.equal('First paragraph. Second.');
    expect(reply.text).to.include('<description>First paragraph.\n\nSecond.</description>');
  });

  it('the enclosure URL serves exactly `length` bytes: GET, HEAD and the ranges podcast fetchers send (bytes=0-1, bytes=0-)', async () => {
    const { station } = await podcastStation(server.url);
    const audio = await uploadAudio(server.url, station.id, 1.5);
    await publishEpisode(server.url, station.id, { title: 'Bytes', audio: audio.versionId });
    const { feed } = await fetchFeed(server.url, feedPath(station.slug));
    const { url, length, type } = feed.items[0].enclosure;
    const path = url.slice(server.svc.config.publicBaseUrl.length);
    const whole = await fetchMedia(server.url, path);
    expect(whole.status).to.equal(200);
    expect(whole.bytes.length).to.equal(length);
    expect(whole.bytes.equals(audio.bytes)).to.equal(true);
    expect(whole.headers.get('content-type')).to.equal(type);
    const head = await fetchMedia(server.url, path, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(head.headers.get('content-length')).to.equal(String(length));
    expect(head.headers.get('accept-ranges')).to.equal('bytes');
    expect(head.bytes.length).to.equal(0);
    const probe = await fetchMedia(server.url, path, { headers: { range: 'bytes=0-1' } });
    expect(probe.status).to.equal(206);
    expect(probe.headers.get('content-range')).to.equal(`bytes 0-1/${length}`);
    expect(probe.bytes.equals(audio.bytes.subarray(0, 2))).to.equal(true);
    const open = await fetchMedia(server.url, path, { headers: { range: 'bytes=0-' } });
    expect(open.status).to.equal(206);
    expect(open.headers.get('content-range')).to.equal(`bytes 0-${length - 1}/${length}`);
    expect(open.bytes.length).to.equal(length);
  });

  it('text survives any title: <&>"\' and emoji escaped and intact, control characters removed', async () => {
    const { station } = await podcastStation(server.url);
    const audio = await uploadAudio(server.url, station.id);
    const title = 'Rock <&> Roll "live" \'n\' 🎸👩🏽‍🚀\u0007\u001b\u007f\u0085 end';
    await publishEpisode(server.url, station.id, { title, description: `${title}\nline two`, audio: audio.versionId });
    const { reply, feed } = await fetchFeed(server.url, feedPath(station.slug));
    expect(feed.items[0].title).to.equal('Rock <&> Roll "live" \'n\' 🎸👩🏽‍🚀 end');
    expect(feed.items[0].description).to.include('Rock <&> Roll "live" \'n\' 🎸👩🏽‍🚀 end');
    expect(reply.text).to.include('Rock &lt;&amp;&gt; Roll');
    // eslint-disable-next-line no-control-regex
    expect(reply.text).not.to.match(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/);
    expect(kid(kid(parseXml(reply.text), 'channel'), 'item').children.length).to.be.greaterThan(5);
  });

  it('GUIDs are the record ids: the same across edits, republishing and a renamed station; items keep their first publication order', async () => {
    const { station } = await podcastStation(server.url);
    const audio = await uploadAudio(server.url, station.id);
    const a = await publishEpisode(server.url, station.id, { title: 'A', audio: audio.versionId });
    const b = await publishEpisode(server.url, station.id, { title: 'B', audio: audio.versionId });
    const before = (await fetchFeed(server.url, feedPath(station.slug))).feed;
    expect(before.items.map((i) => i.guid)).to.deep.equal([b, a]);
    await admin(server.url, 'POST', `/stations/${station.id}/records/${a}/unpublish`);
    await publishEpisode(server.url, station.id, { title: 'A, edited', audio: audio.versionId }, { id: a });
    const slug = `${station.slug}-renamed`;
    expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { slug, name: 'Renamed FM' })).status).to.equal(200);
    const after = (await fetchFeed(server.url, feedPath(slug))).feed;
    expect(after.items.map((i) => [i.guid, i.title])).to.deep.equal([
      [b, 'B'],
      [a, 'A, edited'],
    ]);
    expect(after.items[1].pubDate?.getTime()).to.equal(before.items[1].pubDate?.getTime());
    expect(after.title).to.equal('Renamed FM');
  });

  it('rebuilt when an episode is published, edited or unpublished, the program changes, or the setting changes', async () => {
    const { station, imageVersionId } = await podcastStation(server.url);
    const program = await putProgram(server.url, station.id, { title: 'Show' });
    const audio = await uploadAudio(server.url, station.id);
    const stationPath = feedPath(station.slug);
    const programPath = feedPath(station.slug, program);
    expect((await fetchFeed(server.url, stationPath)).feed.items).to.have.length(0);
    expect((await fetchFeed(server.url, programPath)).feed.items).to.have.length(0);

    const id = await publishEpisode(server.url, station.id, { title: 'New', audio: audio.versionId }, { programIds: [program] });
    expect((await fetchFeed(server.url, stationPath)).feed.items.map((i) => i.title)).to.deep.equal(['New']);
    expect((await fetchFeed(server.url, programPath)).feed.items.map((i) => i.title)).to.deep.equal(['New']);

    await publishEpisode(server.url, station.id, { title: 'Edited', audio: audio.versionId }, { id, programIds: [program] });
    expect((await fetchFeed(server.url, stationPath)).feed.items.map((i) => i.title)).to.deep.equal(['Edited']);

    await putProgram(server.url, station.id, { title: 'Show, renamed' }, program);
    expect((await fetchFeed(server.url, programPath)).feed.title).to.equal('Show, renamed – Waveline Test FM');

    const res = await patchPodcasts(server.url, station.id, setting(imageVersionId, { author: 'New Author', explicit: true }));
    expect(res.status).to.equal(200);
    const changed = (await fetchFeed(server.url, stationPath)).feed;
    expect(changed.author).to.equal('New Author');
    expect(changed.explicit).to.equal(true);

    expect((await admin(server.url, 'POST', `/stations/${station.id}/records/${id}/unpublish`)).status).to.equal(200);
    expect((await fetchFeed(server.url, stationPath)).feed.items, 'unpublished: gone on the next read').to.have.length(0);
    expect((await fetchFeed(server.url, programPath)).feed.items).to.have.length(0);
  });

  it('the station document (REST and GraphQL) gives resources.podcast: the absolute station feed URL, null when podcasts are off', async () => {
    const { station, imageVersionId } = await podcastStation(server.url);
    const { token } = await createToken(server.url, station.id);
    const doc = async () => (await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).body.resources.podcast;
    expect(await doc()).to.equal(`${server.svc.config.publicBaseUrl}/podcasts/${station.slug}/feed.xml`);
    const graphql = await gql(server.url, station.slug, token, '{ station { resources { podcast } } }');
    expect(graphql.body.data.station.resources.podcast).to.equal(await doc());
    expect((await patchPodcasts(server.url, station.id, setting(imageVersionId, { enabled: false }))).status).to.equal(200);
    expect(await doc()).to.equal(null);
  });
});
