import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { followObservation } from '../src/domains/nowPlaying/following.ts';
import type { IngestResult } from '../src/domains/nowPlaying/model.ts';

/** Rundown following of one observation; the return value is the ingest answer a waiting request sends. */
export async function nowPlayingFollow(payload: JobPayload<'nowPlaying.follow'>, svc: Services): Promise<IngestResult> {
  return followObservation(svc, payload.observationId, payload.stationId);
}
