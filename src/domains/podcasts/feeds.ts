import { NotFoundError } from '../../lib/errors.ts';
import { readKey, Representation, type ReadArea } from '../../lib/readCache.ts';
import { readOn } from '../../lib/replicas/routing.ts';
import type { WebServices as Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { buildFeed } from './feed.ts';
import { FEED_TYPE, programFeedPath, stationFeedPath } from './model.ts';
import { findEpisodes, findProgram, lastEpisodeChange } from './queries.ts';

// A feed's bytes are kept in the read cache (lib/readCache.ts) like every listener read: keyed by the
// station (and program), dropped here and in every other web process (the invalidation bus) when the
// station or its setting changes (`station`), an episode is published, changed or unpublished
// (`content`), or a program changes (`schedule`). A build that saw one of those while it ran is not
// kept; the next read builds the feed again.

const FEED_AREAS: readonly ReadArea[] = ['content', 'schedule'];

/** The cache key of a station feed (`programId` null) or a program feed. */
export const feedKey = (stationId: string, programId: string | null): string => readKey('podcastFeed', stationId, programId ?? '');

/** The feed's bytes: stored ones while exact, else built (404 for a program unknown to the station). */
export function podcastFeed(svc: Services, station: Station, programId: string | null): Representation | Promise<Representation> {
  return svc.reads.read(feedKey(station.id, programId), station.id, FEED_AREAS, svc.clock.now().getTime(), async (basis) => {
    // Built where the station's reads are routed (a replica that shows its last write, else the primary).
    const bytes = await readOn(svc, station.id, (on) => buildFeedBytes(on, station, programId), basis);
    return new Representation(bytes, FEED_TYPE);
  });
}

export async function buildFeedBytes(
  svc: Pick<Services, 'db' | 'config' | 'media'>,
  station: Station,
  programId: string | null,
): Promise<Buffer> {
  const { db } = svc;
  const podcasts = station.podcasts;
  const program = programId === null ? null : await findProgram(db, station.id, programId);
  if (programId !== null && !program) throw new NotFoundError('Program not found.');
  const type = podcasts.episodeType ?? '';
  const [episodes, lastChange, artwork] = await Promise.all([
    findEpisodes(db, station.id, type, programId),
    lastEpisodeChange(db, station.id, type),
    db('media_versions').where({ id: podcasts.imageVersionId, station_id: station.id }).first<{ mime: string } | undefined>('mime'),
  ]);
  // Behind a CDN (MEDIA_PUBLIC_BASE_URL) enclosures point at the audio's public URL.
  const enclosures = new Map<string, string>();
  for (const episode of episodes) {
    const url =
      episode.audio_store && episode.audio_object_key ? await svc.media.publicUrl(episode.audio_store, episode.audio_object_key) : null;
    if (url) enclosures.set(episode.audio_id, url);
  }
  const changes = [new Date(station.updatedAt), lastChange, program ? new Date(program.updated_at) : null];
  const base = svc.config.publicBaseUrl;
  const xml = buildFeed({
    station,
    podcasts,
    publicBaseUrl: base,
    feedUrl: base + (programId === null ? stationFeedPath(station.slug) : programFeedPath(station.slug, programId)),
    program,
    episodes,
    enclosures,
    artworkMime: artwork?.mime ?? 'image/jpeg',
    lastBuildDate: new Date(Math.max(...changes.map((d) => d?.getTime() ?? 0))),
  });
  return Buffer.from(xml, 'utf8');
}
