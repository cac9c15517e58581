import type { Context } from 'koa';
import { defineRoute } from '../../http/route.ts';
import { sendCacheable } from '../../http/etag.ts';
import { ErrorBody, SLUG_PATTERN, Type } from '../../http/schema.ts';
import { isPublic } from '../../http/subjects.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import type { Representation } from '../../lib/readCache.ts';
import type { WebServices as Services } from '../../services.ts';
import { INLINE_BYTES, sendFile } from '../media/delivery.ts';
import { fileOpener } from '../media/queries.ts';
import type { Station } from '../stations/model.ts';
import { feedKey, podcastFeed } from './feeds.ts';
import { ARTWORK_TYPES, FEED_CACHE_CONTROL } from './model.ts';
import { findArtworkFile } from './queries.ts';

// Podcast feeds (docs/podcasts.md#the-feeds): anonymous — podcast
// apps and directories send no credential — answered from cached bytes with a strong ETag and
// `Cache-Control: public, max-age=300`. The feeds name no station gate: a stored feed is answered before
// Koa (http/storedAnswers.ts) while the station, as the station cache holds it, still publishes it.

const NOT_FOUND = 'Station unknown, inactive or offline, or podcasts are off.';
const SLUG = new RegExp(SLUG_PATTERN);
const slugShaped = (slug: string): boolean => SLUG.test(slug);

const feedResponses = (what: string, notFound: string) => ({
  200: { description: what, contentType: 'application/rss+xml', schema: Type.String({ title: 'PodcastFeed', description: 'RSS 2.0' }) },
  304: { description: 'Not modified (If-None-Match matched the ETag).' },
  404: { description: notFound, schema: ErrorBody },
  429: { description: 'Rate limited (per client IP).', schema: ErrorBody },
});

const feed = {
  method: 'get' as const,
  tags: ['podcasts'],
  surface: 'system' as const,
  rateLimit: 'anonymous' as const,
};

/** The station while it publishes podcasts (known, active, public-online, podcasts on), else undefined/null. */
const publishing = (station: Station | null | undefined): Station | null | undefined =>
  station && (isPublic(station) && station.podcasts.enabled ? station : null);

async function podcastStation(svc: Services, slug: string): Promise<Station> {
  const station = slugShaped(slug) ? publishing(await svc.stations.bySlugOrNull(slug)) : null;
  if (!station) throw new NotFoundError(NOT_FOUND);
  return station;
}

/** The stored feed for `RouteSpec.stored`; undefined (the route runs) when the station or the feed is not in memory. */
function storedFeed(svc: Services, slug: string, programId: string | null) {
  const station = slugShaped(slug) ? publishing(svc.stations.peekBySlug(slug)) : null;
  if (!station) return undefined;
  const rep = svc.reads.peek(feedKey(station.id, programId), svc.clock.now().getTime());
  return rep ? { rep, cacheControl: FEED_CACHE_CONTROL } : undefined;
}

const sendFeed = (ctx: Context, rep: Representation) => sendCacheable(ctx, rep.bytes, rep.contentType, rep.etag, FEED_CACHE_CONTROL);

// Any slug or program id that names nothing is 404 (a malformed one too, as on the listener reads).
const StationSlug = Type.String({ minLength: 1, maxLength: 100, description: 'the station’s slug' });
const FeedParams = Type.Object({ stationSlug: StationSlug }, { additionalProperties: false });
const ProgramFeedParams = Type.Object(
  { stationSlug: StationSlug, programId: Type.String({ minLength: 1, maxLength: 100, description: 'the program’s id (UUID)' }) },
  { additionalProperties: false },
);

async function sendArtwork(ctx: Context, svc: Services, slug: string, extension: 'jpg' | 'png'): Promise<void> {
  const station = await podcastStation(svc, slug);
  const versionId = station.podcasts.imageVersionId;
  const inlineUpTo = ctx.method === 'HEAD' ? -1 : INLINE_BYTES;
  const file = versionId ? await findArtworkFile(svc.db, station.id, versionId, inlineUpTo) : null;
  if (!versionId || !file || ARTWORK_TYPES[file.mime] !== extension) throw new NotFoundError('No podcast cover at this address.');
  await sendFile(ctx, file, fileOpener(svc, file, versionId, 'original', svc.logger), FEED_CACHE_CONTROL);
}

const artworkRoute = (extension: 'jpg' | 'png') =>
  defineRoute({
    ...feed,
    path: `/podcasts/{stationSlug}/artwork.${extension}`,
    operationId: extension === 'jpg' ? 'getPodcastArtworkJpeg' : 'getPodcastArtworkPng',
    summary: `The podcast cover when it is a ${extension === 'jpg' ? 'JPEG' : 'PNG'} (the feeds’ \`itunes:image\`)`,
    description:
      'Anonymous, while podcasts are on (whether or not a record references the image). Strong ETag and 304, `Cache-Control: public, max-age=300`, `Accept-Ranges`; one `bytes=` range gives 206 (the media rules); HEAD answers like GET without the body.',
    params: FeedParams,
    responses: {
      200: { description: 'The image.', contentType: extension === 'jpg' ? 'image/jpeg' : 'image/png' },
      206: { description: 'One byte range.', contentType: extension === 'jpg' ? 'image/jpeg' : 'image/png' },
      304: { description: 'Not modified (If-None-Match matched the ETag).' },
      404: { description: `${NOT_FOUND} Or the cover is of the other type.`, schema: ErrorBody },
      416: { description: 'The range starts past the end (`Content-Range: bytes */size`).', schema: ErrorBody },
      429: { description: 'Rate limited (per client IP).', schema: ErrorBody },
    },
    async handler({ ctx, svc, params }) {
      await sendArtwork(ctx, svc, params.stationSlug, extension);
    },
  });

export const podcastRoutes = [
  defineRoute({
    ...feed,
    path: '/podcasts/{stationSlug}/feed.xml',
    operationId: 'getPodcastFeed',
    summary: 'The station’s podcast feed: every episode (RSS 2.0 with the itunes, podcast and atom namespaces)',
    description:
      'Anonymous. The newest 300 episodes by first publication. `Content-Type: application/rss+xml; charset=utf-8`, `Cache-Control: public, max-age=300`, strong ETag and 304.',
    params: FeedParams,
    responses: feedResponses('The station feed.', NOT_FOUND),
    stored: (p, _req, svc) => storedFeed(svc, p.stationSlug, null),
    async handler({ ctx, svc, params }) {
      const station = await podcastStation(svc, params.stationSlug);
      sendFeed(ctx, await podcastFeed(svc, station, null));
    },
  }),
  defineRoute({
    ...feed,
    path: '/podcasts/{stationSlug}/programs/{programId}/feed.xml',
    operationId: 'getPodcastProgramFeed',
    summary: 'A program’s podcast feed: the episodes related to the program (RSS 2.0)',
    description: 'Anonymous. A program without episodes is a valid feed with no items. Same headers as the station feed.',
    params: ProgramFeedParams,
    responses: feedResponses('The program feed.', `${NOT_FOUND} Or the program is unknown or another station’s.`),
    stored: (p, _req, svc) => (isUuid(p.programId) ? storedFeed(svc, p.stationSlug, p.programId.toLowerCase()) : undefined),
    async handler({ ctx, svc, params }) {
      const station = await podcastStation(svc, params.stationSlug);
      if (!isUuid(params.programId)) throw new NotFoundError('Program not found.');
      sendFeed(ctx, await podcastFeed(svc, station, params.programId.toLowerCase()));
    },
  }),
  artworkRoute('jpg'),
  artworkRoute('png'),
];
