import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { refreshRecordsUsingMedia } from '../src/domains/content/publish.ts';

/**
 * The variants job re-presents the records using a version right after storing its renditions, but a
 * publish that read the version's files just before they were stored and committed just after would
 * be missed (its published_media row was not visible yet). This runs the same refresh again a few
 * seconds later; a record already up to date is left alone.
 */
export async function mediaRefresh(payload: JobPayload<'media.refresh'>, svc: Services): Promise<{ refreshedRecords: number }> {
  return { refreshedRecords: await refreshRecordsUsingMedia(svc, payload.stationId, payload.versionId) };
}
