import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { asksCatalogue, requestLookup, type CatalogueCandidate } from './catalogue/ask.ts';
import { requestResolve } from './requests.ts';

// What artwork does once the ingest stored a track (the art decided before it is stored is
// pinCache.ts's `ingestArtOf`): the worker looks its cover up in the catalogue when due, then checks
// and resolves its art. The ingest never waits for either.

/**
 * The art work of a track just stored: its catalogue look-up when due, and the resolution of its art —
 * its own job, unless `resolvedByFollowing`: the ingest's rundown following job resolves it after it
 * answered (one job an ingest, not two). Answers whether the track's art is to be resolved at all.
 */
export function trackStored(
  svc: Pick<Services, 'jobs' | 'logger'>,
  station: Pick<Station, 'artworkLookup'>,
  track: CatalogueCandidate & { id: string },
  resolvedByFollowing = false,
): boolean {
  if (asksCatalogue(station, track, 'stored')) requestLookup(svc, track.id);
  // Its art is checked and resolved by the worker; a follow-up row goes out when it changes.
  if (track.title === null) return false;
  if (!resolvedByFollowing) requestResolve(svc, track.id);
  return true;
}
