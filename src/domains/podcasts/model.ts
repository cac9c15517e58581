// The podcast setting of a station and the identifiers its feeds carry
// (docs/podcasts.md#the-podcasts-station-setting, docs/podcasts.md#the-feeds).
import { createHash } from 'node:crypto';

export interface PodcastCategory {
  category: string;
  subcategory?: string;
}

export interface Podcasts {
  enabled: boolean;
  /** The content type whose published records are the episodes. */
  episodeType: string | null;
  author: string | null;
  ownerName: string | null;
  ownerEmail: string | null;
  /** BCP 47 language tag (`de`, `en-GB`). */
  language: string | null;
  explicit: boolean;
  categories: PodcastCategory[];
  /** The cover: a square JPEG or PNG image version of the station, 1400–3000 px. */
  imageVersionId: string | null;
  copyright: string | null;
}

export const DEFAULT_PODCASTS: Readonly<Podcasts> = Object.freeze({
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

/** Every field but these is required when the setting is enabled. */
export const REQUIRED_WHEN_ENABLED = [
  'episodeType',
  'author',
  'ownerName',
  'ownerEmail',
  'language',
  'categories',
  'imageVersionId',
] as const satisfies ReadonlyArray<keyof Podcasts>;

/** The stored block (possibly partial, `{}` when never set) with every key present. */
export function podcastsFromStored(stored: Partial<Podcasts> | null | undefined): Podcasts {
  return { ...DEFAULT_PODCASTS, ...(stored ?? {}), categories: stored?.categories ?? [] };
}

/** Apple's artwork rules: a square of 1400 to 3000 pixels, JPEG or PNG. */
export const ARTWORK_MIN = 1400;
export const ARTWORK_MAX = 3000;
export const ARTWORK_TYPES: Readonly<Record<string, 'jpg' | 'png'>> = { 'image/jpeg': 'jpg', 'image/png': 'png' };

/** At most this many items in one feed (the newest by first publication). */
export const MAX_ITEMS = 300;

export const FEED_TYPE = 'application/rss+xml; charset=utf-8';
export const FEED_CACHE_CONTROL = 'public, max-age=300';

export const stationFeedPath = (slug: string): string => `/podcasts/${slug}/feed.xml`;
export const programFeedPath = (slug: string, programId: string): string => `/podcasts/${slug}/programs/${programId}/feed.xml`;
export const artworkPath = (slug: string, mime: string): string => `/podcasts/${slug}/artwork.${ARTWORK_TYPES[mime] ?? 'jpg'}`;

/** The station document's `resources.podcast`: the absolute station feed URL, or null when podcasts are off. */
export function podcastResource(station: { slug: string; podcasts: Podcasts }, publicBaseUrl: string): string | null {
  return station.podcasts.enabled ? publicBaseUrl + stationFeedPath(station.slug) : null;
}

/** The Podcasting 2.0 namespace's UUID for `podcast:guid`. */
export const PODCAST_GUID_NAMESPACE = 'ead4c236-bf58-58c6-a2c6-a6b28d128cb6';

/** A name-based UUID, version 5 (RFC 9562 §5.5: SHA-1 of the namespace's 16 bytes and the name's UTF-8). */
export function uuidV5(name: string, namespace: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16);
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `podcast:guid`: the UUID v5 of the feed URL without its scheme and trailing slashes. */
export function podcastGuid(feedUrl: string): string {
  return uuidV5(feedUrl.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, ''), PODCAST_GUID_NAMESPACE);
}
