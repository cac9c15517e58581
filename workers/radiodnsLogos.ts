import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { renderStationLogos } from '../src/domains/radiodns/logos.ts';

/** Renders and stores the RadioDNS logo renditions of a version (idempotent: a retry stores the same bytes). */
export async function radiodnsLogos(payload: JobPayload<'radiodns.logos'>, svc: Services): Promise<{ rendered: number }> {
  return { rendered: await renderStationLogos(svc, payload.stationId, payload.versionId) };
}
