import type { Services } from '../../../services.ts';
import type { Station } from '../../stations/model.ts';

// Whether the catalogue is asked for a track's cover, decided here alone, and the one way it is asked:
// the `nowPlaying.artwork` job (lookup.ts). A track is looked up once it has no usable URL of its own:
// when it is stored without one, or when its own URL was fetched and refused (docs/now-playing.md#the-source-chain).

/** The stored track as the decision reads it. */
export interface CatalogueCandidate {
  title: string | null;
  artwork_url: string | null;
  catalogue_url?: string | null;
}

/** Why the catalogue is not asked about the track (the look-up job reports it); null when it may be. */
export function notAsked(station: Pick<Station, 'artworkLookup'> | null, track: CatalogueCandidate): string | null {
  if (track.catalogue_url) return 'artwork already known';
  if (!track.title) return 'no track';
  if (!station?.artworkLookup) return 'lookup switched off';
  return null;
}

/**
 * Whether to ask the catalogue now: `stored` — the track was just stored (asked when it came without a
 * URL of its own); `ingest-refused` — the check of its own URL refused it.
 */
export function asksCatalogue(
  station: Pick<Station, 'artworkLookup'>,
  track: CatalogueCandidate,
  moment: 'stored' | 'ingest-refused',
): boolean {
  if (notAsked(station, track) !== null) return false;
  return moment === 'ingest-refused' || track.artwork_url === null;
}

/** Asks the catalogue about a stored track: one look-up job per track (job id `artwork-{id}`). */
export function requestLookup(svc: Pick<Services, 'jobs' | 'logger'>, observationId: string): void {
  svc.jobs
    .enqueue('nowPlaying.artwork', { observationId }, { jobId: `artwork-${observationId}` })
    .catch((err: unknown) => svc.logger.warn({ err, observationId }, 'artwork lookup could not be enqueued'));
}
