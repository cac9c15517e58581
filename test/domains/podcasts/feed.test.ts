import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { admin } from '../../support/http.ts';
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

// decisions.md, "Podcasts: programs on demand": the station and program feeds as podcast apps read them
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
});
