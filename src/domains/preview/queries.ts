import type { Db } from '../../lib/db.ts';
import type { EditorialPreview } from './schemas.ts';
import { NotFoundError } from '../../lib/errors.ts';
import type { ContentTypeVersionRow, RecordRow, RevisionRow } from '../content/model.ts';
import { EMPTY_DOCUMENT } from '../content/model.ts';
import { deliveredRevision } from '../content/publish.ts';

export type { EditorialPreview };

export async function findRecord(db: Db, stationId: string, recordId: string): Promise<RecordRow | null> {
  return (await db<RecordRow>('records').where({ id: recordId.toLowerCase(), station_id: stationId }).first()) ?? null;
}

/**
 * A revision of a record as listeners would see it once published (draft or published; the latest
 * when `revision` is omitted). Private and system fields are left out as on every listener surface.
 */
export async function previewRevision(db: Db, stationId: string, recordId: string, revision?: number | null): Promise<EditorialPreview> {
  const record = await findRecord(db, stationId, recordId);
  if (!record || record.latest_revision < 1) throw new NotFoundError('Record not found.');
  const wanted = revision ?? record.latest_revision;
  const draft = await db<RevisionRow>('record_revisions').where({ record_id: record.id, revision: wanted }).first();
  if (!draft) throw new NotFoundError(`Revision ${wanted} does not exist.`);
  const version = (await db<ContentTypeVersionRow>('content_type_versions')
    .where({ station_id: stationId, key: record.type, version: draft.schema_version })
    .first()) as ContentTypeVersionRow;
  const { values, media } = await deliveredRevision(db, stationId, version.fields, draft);
  return { revision: draft.revision, values, document: draft.document ?? EMPTY_DOCUMENT, media: media.items };
}
