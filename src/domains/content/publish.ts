import type { Knex } from 'knex';
import { deleteFeedRow, upsertFeedRow } from '../../feed/rows.ts';
import { invalidateReads } from '../../lib/readCache.ts';
import { emitAfterCommit } from '../webhooks/emit.ts';
import { inTransaction, type Tx } from '../../lib/db.ts';
import { NotFoundError, RevisionConflictError, ValidationError, type Issue } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Services } from '../../services.ts';
import { canonicalJson } from '../../lib/canonicalJson.ts';
import type { ContentTypeVersionRow, FieldDefinition, MediaVersionRow, PublishedRecordRow, RecordRow, RevisionRow } from './model.ts';
import { presentMediaItem, presentRecord } from './presenter.ts';
import { closePosition, currentPosition, nextPositionSeq } from './positions.ts';
import type { MediaItem, PublishedRecord } from './schemas.ts';
import { deliveredMediaIds, deliveredValues, missingRequired } from './values.ts';

// Publishing stores the listener projection: the presented record (body), its delivered values for
// filtering, its slug history and which media versions it makes public; the `content` feed row follows
// in the same transaction and goes out after commit.

export interface PublishReceipt {
  id: string;
  revision: number;
  publishedAt: string;
}

/** Presents media versions in the given order; ids that no longer exist are returned as missing. */
async function presentMedia(
  trx: Knex.Transaction | Knex,
  stationId: string,
  ids: string[],
): Promise<{ items: MediaItem[]; missing: string[] }> {
  if (ids.length === 0) return { items: [], missing: [] };
  const rows: MediaVersionRow[] = await trx('media_versions').where('station_id', stationId).whereIn('id', ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const items: MediaItem[] = [];
  const missing: string[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (!row) {
      missing.push(id);
      continue;
    }
    items.push(presentMediaItem(stationId, row));
  }
  return { items, missing };
}

/**
 * What listeners would see of a revision: delivered values and its media items (the `media` list, then
 * versions that delivered media fields reference). Shared with editorial previews.
 */
export async function deliveredRevision(trx: Knex.Transaction | Knex, stationId: string, fields: FieldDefinition[], revision: RevisionRow) {
  const values = deliveredValues(fields, revision.values);
  const mediaIds = [...new Set([...revision.media.map((m) => m.versionId), ...deliveredMediaIds(fields, values)])];
  return { values, mediaIds, media: await presentMedia(trx, stationId, mediaIds) };
}

async function lockRecord(tx: Tx, stationId: string, recordId: string): Promise<RecordRow> {
  const record = await tx.trx<RecordRow>('records').where({ id: recordId, station_id: stationId }).forUpdate().first();
  if (!record) throw new NotFoundError('Record not found.');
  return record;
}

async function replacePublishedMedia(trx: Knex.Transaction, stationId: string, recordId: string, versionIds: string[]): Promise<void> {
  await trx('published_media').where({ record_id: recordId }).delete();
  if (versionIds.length > 0)
    await trx('published_media').insert(versionIds.map((id) => ({ version_id: id, record_id: recordId, station_id: stationId })));
}

/**
 * Publishes a revision (the latest when omitted). Required fields are checked here. `firstPublishedAt`
 * is kept across publications; every publish, a republish of the current revision included, is a new
 * publication: `publishedAt` moves, `publicationId` is new and the feed row is upserted again.
 */
export async function publishRecord(
  svc: Services,
  input: { stationId: string; recordId: string; revision?: number },
): Promise<PublishReceipt> {
  const { stationId } = input;
  const now = svc.clock.now();
  return inTransaction(svc.db, async (tx) => {
    const { trx } = tx;
    tx.afterCommit(() => invalidateReads(svc, stationId, 'content'));
    const record = await lockRecord(tx, stationId, input.recordId);
    const revision = input.revision ?? record.latest_revision;
    if (revision < 1 || revision > record.latest_revision) {
      throw new RevisionConflictError(`Revision ${revision} does not exist; the latest is ${record.latest_revision}.`, [
        { path: 'revision', code: 'not_found', message: `revision must be between 1 and ${record.latest_revision}` },
      ]);
    }
    const draft = (await trx<RevisionRow>('record_revisions').where({ record_id: record.id, revision }).first()) as RevisionRow;
    const version = (await trx<ContentTypeVersionRow>('content_type_versions')
      .where({ station_id: stationId, key: record.type, version: draft.schema_version })
      .first()) as ContentTypeVersionRow;

    const { values, media, mediaIds } = await deliveredRevision(trx, stationId, version.fields, draft);
    const issues: Issue[] = missingRequired(version.fields, draft.values);
    for (const id of media.missing) issues.push({ path: 'media', code: 'not_found', message: `media version ${id} no longer exists` });
    if (issues.length > 0) throw new ValidationError('The revision cannot be published.', issues);

    // A new publication is a new list position: the old one (if any) goes to the history for walks
    // that started before this change.
    const seq = await nextPositionSeq(trx, stationId, record.type);
    const previous = await currentPosition(trx, record.id);
    if (previous) await closePosition(trx, previous, seq);
    const firstPublishedAt = record.first_published_at ?? now;
    const publicationId = newId();
    const body = presentRecord({
      stationId,
      recordId: record.id,
      type: record.type,
      publicationId,
      revision,
      schemaVersion: draft.schema_version,
      publishedAt: now,
      firstPublishedAt,
      values,
      document: draft.document,
      media: media.items,
      programIds: draft.related.programIds ?? [],
    });
    const slug = typeof values.slug === 'string' ? values.slug : null;
    await trx('published_records')
      .insert({
        record_id: record.id,
        station_id: stationId,
        type: record.type,
        revision,
        schema_version: draft.schema_version,
        slug,
        published_at: now,
        first_published_at: firstPublishedAt,
        updated_at: now,
        delivered_values: JSON.stringify(values),
        body: JSON.stringify(body),
        publication_id: publicationId,
        position_from: seq,
      })
      .onConflict('record_id')
      .merge();
    // Every slug a published record used stays resolvable (one row per slug and record); the newest
    // use among published records wins a clash (queries.ts, findPublishedRecordBySlug).
    if (slug !== null) {
      await trx('record_slugs')
        .insert({ station_id: stationId, type: record.type, slug, record_id: record.id, used_at: now })
        .onConflict(['station_id', 'type', 'slug', 'record_id'])
        .merge(['used_at']);
    }
    await replacePublishedMedia(trx, stationId, record.id, mediaIds);
    await trx('content_type_versions')
      .where({ station_id: stationId, key: record.type, version: draft.schema_version })
      .whereNull('published_at')
      .update({ published_at: now });
    await trx('records')
      .where({ id: record.id })
      .update({ published_revision: revision, first_published_at: firstPublishedAt, updated_at: now });
    await upsertFeedRow(tx, svc.bus, { stationId, kind: 'content', entry: record.id, data: body, now });
    emitAfterCommit(tx, svc, stationId, 'content.published', { type: record.type, id: record.id, revision });
    return { id: record.id, revision, publishedAt: now.toISOString() };
  });
}

/** Takes a record off the listener side (effective on the next read) and removes its feed row. Idempotent. */
export async function unpublishRecord(
  svc: Services,
  input: { stationId: string; recordId: string },
): Promise<{ id: string; published: false }> {
  const now = svc.clock.now();
  return inTransaction(svc.db, async (tx) => {
    tx.afterCommit(() => invalidateReads(svc, input.stationId, 'content'));
    const record = await lockRecord(tx, input.stationId, input.recordId);
    const previous = await currentPosition(tx.trx, record.id);
    if (previous) {
      // Walks that started while it was published keep its position (it is just no longer delivered).
      await closePosition(tx.trx, previous, await nextPositionSeq(tx.trx, input.stationId, record.type));
      await tx.trx('published_records').where({ record_id: record.id }).delete();
    }
    await replacePublishedMedia(tx.trx, input.stationId, record.id, []);
    if (record.published_revision !== null) {
      await tx.trx('records').where({ id: record.id }).update({ published_revision: null, updated_at: now });
    }
    await deleteFeedRow(tx, svc.bus, { stationId: input.stationId, kind: 'content', entry: record.id, now });
    // Only a record that was delivered is unpublished (the route is idempotent: a repeat sends nothing).
    if (record.published_revision !== null) {
      emitAfterCommit(tx, svc, input.stationId, 'content.unpublished', {
        type: record.type,
        id: record.id,
        revision: record.published_revision,
      });
    }
    return { id: record.id, published: false as const };
  });
}

/**
 * Re-presents the published records that use a media version (called after its renditions are stored).
 * Variant paths no longer depend on the renditions, so only a record stored before that rule (null
 * variants) changes; it gets a new `updatedAt` and feed row.
 */
export async function refreshRecordsUsingMedia(svc: Services, stationId: string, versionId: string): Promise<number> {
  const now = svc.clock.now();
  const recordIds: string[] = await svc.db('published_media').where({ version_id: versionId, station_id: stationId }).pluck('record_id');
  let changed = 0;
  for (const recordId of recordIds) {
    await inTransaction(svc.db, async (tx) => {
      // The record row first, as in publish/unpublish (see positions.ts for the lock order).
      const record = await tx.trx<RecordRow>('records').where({ id: recordId }).forUpdate().first();
      const row = record && (await tx.trx<PublishedRecordRow>('published_records').where({ record_id: recordId }).first());
      if (!record || !row) return;
      const body = row.body as PublishedRecord;
      const media = await presentMedia(
        tx.trx,
        stationId,
        body.media.map((m) => m.versionId),
      );
      const next: PublishedRecord = { ...body, media: media.items };
      if (canonicalJson(next.media) === canonicalJson(body.media)) return;
      // updatedAt moves, so does the record's position in updatedAt walks.
      const seq = await nextPositionSeq(tx.trx, stationId, record.type);
      await closePosition(tx.trx, row, seq);
      await tx
        .trx('published_records')
        .where({ record_id: recordId })
        .update({ body: JSON.stringify(next), updated_at: now, position_from: seq });
      await upsertFeedRow(tx, svc.bus, { stationId, kind: 'content', entry: recordId, data: next, now });
      tx.afterCommit(() => invalidateReads(svc, stationId, 'content'));
      changed++;
    });
  }
  return changed;
}
