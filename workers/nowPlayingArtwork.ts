import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { lookUpArtwork, type ArtworkResult } from '../src/domains/nowPlaying/artwork/lookup.ts';

/** Third-party artwork lookup for one observation; throws (and is retried) when every catalogue failed. */
export async function nowPlayingArtwork(payload: JobPayload<'nowPlaying.artwork'>, svc: Services): Promise<ArtworkResult> {
  return lookUpArtwork(svc, payload.observationId);
}
