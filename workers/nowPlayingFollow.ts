import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { followObservation } from '../src/domains/nowPlaying/following.ts';
import type { IngestResult } from '../src/domains/nowPlaying/model.ts';
import { artworkResolve } from './artwork.ts';

/**
 * Rundown following of one observation; the return value is the ingest answer a waiting request sends.
 * With `resolveArt` (a new track's ingest), the track's art is resolved afterwards, in the same job,
 * once the request has its answer: one job an ingest instead of two (docs/now-playing.md, "Ingest").
 */
export async function nowPlayingFollow(
  payload: JobPayload<'nowPlaying.follow'>,
  svc: Services,
  _job: unknown,
  answer: (value: unknown) => Promise<void>,
): Promise<IngestResult> {
  const result = await followObservation(svc, payload.observationId, payload.stationId);
  if (payload.resolveArt) {
    await answer(result);
    await artworkResolve({ observationId: payload.observationId }, svc);
  }
  return result;
}
