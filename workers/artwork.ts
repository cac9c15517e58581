import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { lookUpArtwork, type ArtworkResult } from '../src/domains/artwork/catalogue/lookup.ts';
import { afterCheck } from '../src/domains/artwork/pins.ts';
import { checkUrl } from '../src/domains/artwork/checks.ts';
import { refreshTrackArt } from '../src/domains/artwork/refresh.ts';

/** Resolves one observation's track art and sends the follow-up now-playing frame when it changed. */
export async function artworkResolve(payload: JobPayload<'artwork.resolve'>, svc: Services): Promise<{ changed: number }> {
  const row = await svc.db('observations').where({ id: payload.observationId }).first<{ station_id: string } | undefined>('station_id');
  const station = row ? await svc.stations.byIdOrNull(row.station_id) : null;
  if (!station) return { changed: 0 };
  return { changed: await refreshTrackArt(svc, station, (q) => q.where('id', payload.observationId)) };
}

/** Fetches and checks one URL, then re-resolves every pin and track that names it. */
export async function artworkCheck(
  payload: JobPayload<'artwork.check'>,
  svc: Services,
): Promise<{ status: string; reason: string | null }> {
  const station = await svc.stations.byIdOrNull(payload.stationId);
  if (!station) return { status: 'skipped', reason: 'station gone' };
  const check = await checkUrl(svc, station, payload.url, payload.source);
  await afterCheck(svc, station, check);
  return { status: check.status, reason: check.reason };
}

/** Third-party artwork lookup for one observation; throws (and is retried) when every catalogue failed. */
export async function artworkLookup(payload: JobPayload<'nowPlaying.artwork'>, svc: Services): Promise<ArtworkResult> {
  return lookUpArtwork(svc, payload.observationId);
}
