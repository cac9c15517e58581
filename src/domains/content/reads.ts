import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { JSON_TYPE, Representation } from '../../lib/readCache.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { presentContentType } from './presenter.ts';
import { findPublishedRecord, findPublishedRecordBySlug } from './queries.ts';
import { findTypeVersion, listCurrentTypes } from './types.ts';

// Content's listener reads as cached answers (lib/readCache.ts), shared by REST and GraphQL. They
// change only with writes (publish, unpublish, media renditions, type changes): no validUntil.

type ReadServices = Pick<Services, 'db'>;

export async function recordRead(svc: ReadServices, station: Station, id: string): Promise<Representation> {
  const body = await findPublishedRecord(svc.db, station.id, id);
  if (body === null) throw new NotFoundError('Record not found.');
  return new Representation(Buffer.from(body), JSON_TYPE);
}

export async function recordBySlugRead(svc: ReadServices, station: Station, type: string, slug: string): Promise<Representation> {
  const body = await findPublishedRecordBySlug(svc.db, station.id, type, slug);
  if (body === null) throw new NotFoundError('Record not found.');
  return new Representation(Buffer.from(body), JSON_TYPE);
}

/** Without `type`: every current type; with it, that type at `version` (default current). */
export async function schemasRead(
  svc: ReadServices,
  station: Station,
  query: { type?: string; version?: number },
): Promise<Representation> {
  if (query.type === undefined) {
    if (query.version !== undefined) {
      throw new ValidationError('version needs type.', [
        { path: 'version', code: 'requires_type', message: 'version can only be given together with type' },
      ]);
    }
    return Representation.json({ contractVersion: 1, types: (await listCurrentTypes(svc.db, station.id)).map(presentContentType) });
  }
  const type = await findTypeVersion(svc.db, station.id, query.type, query.version);
  if (!type)
    throw new NotFoundError(query.version === undefined ? 'Unknown content type.' : 'No published snapshot of this content type version.');
  return Representation.json({ contractVersion: 1, types: [presentContentType(type)] });
}
