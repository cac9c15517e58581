import type { Services } from '../../services.ts';
import { urlHash } from './checks.ts';
import { FAILURE_MEMORY_MS, type CheckedSource } from './model.ts';

// The work artwork hands the worker, each kind queued from one place: a track's resolution and a URL's
// check here, the catalogue look-up in catalogue/ask.ts. Nobody waits for them.

/** Resolves a stored track's art again (the `artwork.resolve` job). */
export function requestResolve(svc: Pick<Services, 'jobs' | 'logger'>, observationId: string): void {
  svc.jobs
    .enqueue('artwork.resolve', { observationId })
    .catch((err: unknown) => svc.logger.warn({ err, observationId }, 'artwork resolution could not be enqueued'));
}

export function requestCheck(
  svc: Pick<Services, 'jobs' | 'logger' | 'clock'>,
  stationId: string,
  url: string,
  source: CheckedSource,
): void {
  // One job per URL and day: a URL queued twice is checked once; after its failure is forgotten, again.
  const day = Math.floor(svc.clock.now().getTime() / FAILURE_MEMORY_MS);
  svc.jobs
    .enqueue('artwork.check', { stationId, url, source }, { jobId: `artwork-check.${stationId}.${urlHash(url).slice(0, 32)}.${day}` })
    .catch((err: unknown) => svc.logger.warn({ err, stationId, url }, 'artwork check could not be enqueued'));
}
