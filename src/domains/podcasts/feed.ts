import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import { DateTime } from 'luxon';
import { cutGraphemes, xmlLine, xmlSafe } from '../../lib/xmlText.ts';
import { mediaUrl } from '../content/presenter.ts';
import type { RecordDocument, Values } from '../content/model.ts';
import type { Station } from '../stations/model.ts';
import { ARTWORK_TYPES, artworkPath, podcastGuid, type Podcasts } from './model.ts';
import type { EpisodeRow, ProgramRow } from './queries.ts';

// The RSS 2.0 feed with the itunes, podcast and atom namespaces
// (docs/podcasts.md#what-each-channel-element-comes-from), built with xmlbuilder2, which escapes every text
// and attribute. Texts lose the characters XML cannot carry and control characters; descriptions are cut to
// Apple's 4000 characters, never inside one. The same data gives the same bytes: `lastBuildDate` is the last
// change of what the feed shows, not the build time.

export const ITUNES_NS = 'http://www.itunes.com/dtds/podcast-1.0.dtd';
export const PODCAST_NS = 'https://podcastindex.org/namespace/1.0';
export const ATOM_NS = 'http://www.w3.org/2005/Atom';

/** Apple Podcasts' limit on a description (channel and episode). */
export const DESCRIPTION_MAX = 4000;
const EPISODE_TYPES = ['full', 'trailer', 'bonus'];

export interface FeedInput {
  station: Station;
  podcasts: Podcasts;
  /** `PUBLIC_BASE_URL`: every URL in the feed is absolute. */
  publicBaseUrl: string;
  /** The feed's own absolute URL (`atom:link rel="self"`, `podcast:guid`). */
  feedUrl: string;
  /** Set for a program feed. */
  program: ProgramRow | null;
  episodes: EpisodeRow[];
  /** Enclosure URLs by audio version id where the audio has a public URL (MEDIA_PUBLIC_BASE_URL); else the media route's. */
  enclosures?: ReadonlyMap<string, string>;
  /** The cover's media type (JPEG or PNG): the artwork URL's extension. */
  artworkMime: string;
  lastBuildDate: Date;
}

/** RFC 2822 date-time in UTC (`Fri, 27 Nov 2026 10:15:02 +0000`). */
export const rfc2822 = (at: Date): string => DateTime.fromJSDate(at, { zone: 'utc' }).toRFC2822()!;

const description = (value: string): string => cutGraphemes(xmlSafe(value).trim(), DESCRIPTION_MAX);
const nonEmpty = (value: unknown): string | null => (typeof value === 'string' && xmlLine(value) !== '' ? value : null);

/** A record's document as plain text: its text spans, blocks separated by a blank line. */
export function documentText(document: RecordDocument | null): string {
  const blocks = (document?.blocks ?? []).map((block) => {
    if (typeof block.content === 'string') return block.content;
    if (!Array.isArray(block.content)) return '';
    return block.content.map((span: unknown) => (span && typeof span === 'object' && 'text' in span ? String(span.text) : '')).join('');
  });
  return blocks.filter((text) => text.trim() !== '').join('\n\n');
}

/** A positive whole number, or null (itunes:episode and itunes:season take nothing else). */
const positiveInteger = (value: unknown): number | null => (Number.isInteger(value) && (value as number) > 0 ? (value as number) : null);

export function buildFeed(input: FeedInput): string {
  const { station, podcasts, program, publicBaseUrl } = input;
  const stationDescription = nonEmpty(station.profile.description) ?? nonEmpty(station.profile.tagline) ?? station.name;
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele('rss', {
    version: '2.0',
    'xmlns:itunes': ITUNES_NS,
    'xmlns:podcast': PODCAST_NS,
    'xmlns:atom': ATOM_NS,
  });
  const channel = root.ele('channel');
  channel.ele('title').txt(xmlLine(program ? `${program.title} – ${station.name}` : station.name));
  channel.ele('link').txt(station.profile.websiteUrls?.[0] ?? publicBaseUrl);
  channel.ele('description').txt(description((program && nonEmpty(program.description)) || stationDescription));
  channel.ele('language').txt(podcasts.language ?? '');
  if (podcasts.copyright !== null) channel.ele('copyright').txt(xmlLine(podcasts.copyright));
  channel.ele(ATOM_NS, 'atom:link', { href: input.feedUrl, rel: 'self', type: 'application/rss+xml' });
  itunes(channel, 'author').txt(xmlLine(podcasts.author ?? ''));
  const owner = itunes(channel, 'owner');
  itunes(owner, 'name').txt(xmlLine(podcasts.ownerName ?? ''));
  itunes(owner, 'email').txt(podcasts.ownerEmail ?? '');
  itunes(channel, 'image', { href: publicBaseUrl + artworkPath(station.slug, input.artworkMime) });
  for (const { category, subcategory } of podcasts.categories) {
    const el = itunes(channel, 'category', { text: category });
    if (subcategory) itunes(el, 'category', { text: subcategory });
  }
  itunes(channel, 'explicit').txt(String(podcasts.explicit));
  itunes(channel, 'type').txt('episodic');
  channel.ele(PODCAST_NS, 'podcast:guid').txt(podcastGuid(input.feedUrl));
  channel.ele('lastBuildDate').txt(rfc2822(input.lastBuildDate));
  for (const episode of input.episodes) item(channel.ele('item'), episode, input);
  return root.end({ prettyPrint: false });
}

function itunes(parent: XMLBuilder, name: string, attributes?: Record<string, string>): XMLBuilder {
  return parent.ele(ITUNES_NS, `itunes:${name}`, attributes);
}

function item(el: XMLBuilder, episode: EpisodeRow, input: FeedInput): void {
  const values: Values = episode.values ?? {};
  const firstPublished = new Date(episode.first_published_at);
  const title = nonEmpty(values.title) ?? `${input.station.name}, ${firstPublished.toISOString().slice(0, 10)}`;
  const text = nonEmpty(values.description) ?? nonEmpty(documentText(episode.document)) ?? title;
  el.ele('title').txt(xmlLine(title));
  el.ele('description').txt(description(text));
  el.ele('pubDate').txt(rfc2822(firstPublished));
  el.ele('guid', { isPermaLink: 'false' }).txt(episode.record_id);
  el.ele('enclosure', {
    url: input.enclosures?.get(episode.audio_id) ?? input.publicBaseUrl + mediaUrl(input.station.id, episode.audio_id),
    length: String(Number(episode.audio_size)),
    type: episode.audio_mime,
  });
  if (episode.audio_duration !== null) itunes(el, 'duration').txt(String(Math.round(episode.audio_duration)));
  // Apple takes JPEG or PNG squares only: another episode image is left out (the channel's shows).
  if (episode.image_id && episode.image_mime && ARTWORK_TYPES[episode.image_mime] && episode.image_width === episode.image_height)
    itunes(el, 'image', { href: input.publicBaseUrl + mediaUrl(input.station.id, episode.image_id) });
  const number = positiveInteger(values.episode);
  if (number !== null) itunes(el, 'episode').txt(String(number));
  const season = positiveInteger(values.season);
  if (season !== null) itunes(el, 'season').txt(String(season));
  const type = typeof values.episode_type === 'string' && EPISODE_TYPES.includes(values.episode_type) ? values.episode_type : 'full';
  itunes(el, 'episodeType').txt(type);
  itunes(el, 'explicit').txt(String(typeof values.explicit === 'boolean' ? values.explicit : input.podcasts.explicit));
}
