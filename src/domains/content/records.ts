import type { Knex } from 'knex';
import { deleteFeedRow } from '../../feed/rows.ts';
import { invalidateReads } from '../../lib/readCache.ts';
import { emitAfterCommit } from '../webhooks/emit.ts';
import { inTransaction, type Db } from '../../lib/db.ts';
import { ConflictError, ValidationError, type Issue } from '../../lib/errors.ts';
import { suggest } from '../../http/validate.ts';
import type { Services } from '../../services.ts';
import { canonicalJson } from '../../lib/canonicalJson.ts';
import { checkDocument } from './document.ts';
import type { ContentTypeRow, ContentTypeVersionRow, RecordDocument, RecordRow, RevisionRow, Values } from './model.ts';
import type { PutRecordBody } from './schemas.ts';
import { checkValues, type Reference } from './values.ts';
import { typeKeys } from './types.ts';

// Draft revisions and record removal. Publishing lives in publish.ts.

const dedupe = (ids: string[]): string[] => [...new Set(ids.map((id) => id.toLowerCase()))];

async function unknownType(db: Db, stationId: string, type: string): Promise<ValidationError> {
  const issue: Issue = { path: 'type', code: 'not_found', message: `type "${type}" is not a content type of this station` };
  const suggestion = suggest(type, await typeKeys(db, stationId));
  if (suggestion) issue.suggestion = suggestion;
  return new ValidationError('Unknown content type.', [issue]);
}

/** Issues for media versions and records that do not exist in the station (or have another type). */
async function referenceIssues(
  trx: Knex.Transaction,
  stationId: string,
  recordId: string,
  type: string,
  media: Reference[],
  content: Reference[],
): Promise<Issue[]> {
  const issues: Issue[] = [];
  if (media.length > 0) {
    const found = new Set<string>(
      await trx('media_versions')
        .where('station_id', stationId)
        .whereIn('id', dedupe(media.map((m) => m.id)))
        .pluck('id'),
    );
    for (const ref of media)
      if (!found.has(ref.id))
        issues.push({ path: ref.path, code: 'not_found', message: `media version ${ref.id} does not exist in this station` });
  }
  if (content.length > 0) {
    const rows: Array<{ id: string; type: string }> = await trx('records')
      .where('station_id', stationId)
      .whereIn('id', dedupe(content.map((c) => c.id)))
      .select('id', 'type');
    const types = new Map(rows.map((r) => [r.id, r.type]));
    types.set(recordId, type); // a record may reference itself
    for (const ref of content) {
      const found = types.get(ref.id);
      if (found === undefined)
        issues.push({ path: ref.path, code: 'not_found', message: `record ${ref.id} does not exist in this station` });
      else if (found !== ref.targetType)
        issues.push({
          path: ref.path,
          code: 'invalid_value',
          message: `${ref.path} must reference a ${ref.targetType} record, not a ${found} record`,
        });
    }
  }
  return issues;
}

/**
 * Saves a new draft revision, validated against the type's current version (kinds, bounds, choices,
 * references; required fields are checked at publish). Sending the latest revision's content again
 * returns that revision instead of creating another, so retries are harmless.
 */
export async function saveDraft(
  db: Db,
  input: { stationId: string; recordId: string; body: PutRecordBody; now: Date },
): Promise<{ id: string; revision: number }> {
  const { stationId, body, now } = input;
  const recordId = input.recordId.toLowerCase();
  return db.transaction(async (trx) => {
    const type = await trx<ContentTypeRow>('content_types').where({ station_id: stationId, key: body.type }).first();
    if (!type) throw await unknownType(trx, stationId, body.type);
    await trx('records')
      .insert({ id: recordId, station_id: stationId, type: body.type, latest_revision: 0, created_at: now, updated_at: now })
      .onConflict('id')
      .ignore();
    const record = (await trx<RecordRow>('records').where({ id: recordId }).forUpdate().first()) as RecordRow;
    if (record.station_id !== stationId)
      throw new ConflictError('This record id is used by another station.', [
        { path: 'recordId', code: 'taken', message: 'the id belongs to a record of another station' },
      ]);
    if (record.type !== body.type) {
      throw new ValidationError('A record keeps its type.', [
        { path: 'type', code: 'invalid_value', message: `the record is a ${record.type} record`, suggestion: record.type },
      ]);
    }

    const version = (await trx<ContentTypeVersionRow>('content_type_versions')
      .where({ station_id: stationId, key: body.type, version: type.current_version })
      .first()) as ContentTypeVersionRow;
    const checked = checkValues(version.fields, body.values);
    const document: RecordDocument | null = body.document ?? null;
    const issues = [...checked.issues, ...(document ? checkDocument(document) : [])];
    const media = dedupe((body.media ?? []).map((m) => m.versionId));
    const mediaRefs = [...media.map((id, i) => ({ id, path: `media.${i}.versionId` })), ...checked.media];
    issues.push(...(await referenceIssues(trx, stationId, recordId, body.type, mediaRefs, checked.content)));
    if (issues.length > 0) throw new ValidationError('Invalid record.', issues);

    const revision = {
      schema_version: version.version,
      values: checked.values as Values,
      document,
      media: media.map((versionId) => ({ versionId })),
      related: { programIds: dedupe(body.related?.programIds ?? []) },
    };
    if (record.latest_revision > 0) {
      const latest = (await trx<RevisionRow>('record_revisions')
        .where({ record_id: recordId, revision: record.latest_revision })
        .first()) as RevisionRow;
      const same =
        canonicalJson([latest.schema_version, latest.values, latest.document, latest.media, latest.related]) ===
        canonicalJson([revision.schema_version, revision.values, revision.document, revision.media, revision.related]);
      if (same) return { id: recordId, revision: latest.revision };
    }
    const next = record.latest_revision + 1;
    await trx('record_revisions').insert({
      record_id: recordId,
      revision: next,
      schema_version: revision.schema_version,
      values: JSON.stringify(revision.values),
      document: document === null ? null : JSON.stringify(document),
      media: JSON.stringify(revision.media),
      related: JSON.stringify(revision.related),
      created_at: now,
    });
    await trx('records').where({ id: recordId }).update({ latest_revision: next, updated_at: now });
    return { id: recordId, revision: next };
  });
}

/** Deletes a record with its revisions, slugs and publication; its feed row goes too. Idempotent. */
export async function deleteRecord(svc: Services, stationId: string, recordId: string): Promise<void> {
  await inTransaction(svc.db, async (tx) => {
    const record = await tx.trx<RecordRow>('records').where({ id: recordId, station_id: stationId }).forUpdate().first();
    if (!record) return;
    await deleteFeedRow(tx, svc.bus, { stationId, kind: 'content', entry: record.id, now: svc.clock.now() });
    tx.afterCommit(() => invalidateReads(svc, stationId, 'content'));
    if (record.published_revision !== null) {
      emitAfterCommit(tx, svc, stationId, 'content.unpublished', { type: record.type, id: record.id, revision: record.published_revision });
    }
    await tx.trx('records').where({ id: record.id }).delete();
  });
}
