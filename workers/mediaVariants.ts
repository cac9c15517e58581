import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { refreshRecordsUsingMedia } from '../src/domains/content/publish.ts';
import { storeRenditions } from '../src/domains/media/commands.ts';
import { findRenderSource } from '../src/domains/media/queries.ts';
import { renderVariants } from '../src/domains/media/render.ts';

/** Long past any publish transaction that was in flight while the renditions were stored (mediaRefresh.ts). */
const REFRESH_AGAIN_AFTER_MS = 5000;

/**
 * Renders an image version's variants and stores them (replacing any from an earlier run, so a retry
 * is harmless), then re-presents the published records that use the version so their `variants`
 * paths appear. Other kinds have no variants; a version deleted meanwhile is nothing to do.
 */
export async function mediaVariants(
  payload: JobPayload<'media.variants'>,
  svc: Services,
): Promise<{ rendered: string[]; refreshedRecords: number }> {
  const source = await findRenderSource(svc, payload.versionId);
  if (!source?.original || source.stationId !== payload.stationId || source.kind !== 'image') return { rendered: [], refreshedRecords: 0 };
  const renditions = await renderVariants(source.original, source.focal);
  await storeRenditions(svc, payload.versionId, renditions, svc.clock.now());
  const refreshedRecords = await refreshRecordsUsingMedia(svc, payload.stationId, payload.versionId);
  await svc.jobs.enqueue('media.refresh', payload, { jobId: `refresh-${payload.versionId}`, delay: REFRESH_AGAIN_AFTER_MS });
  return { rendered: renditions.map((r) => r.variant), refreshedRecords };
}
