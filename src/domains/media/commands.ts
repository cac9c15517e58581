import { Readable } from 'node:stream';
import { inTransaction } from '../../lib/db.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Services } from '../../services.ts';
import { CENTRE, etagOf, type FocalPoint, type MediaAssetRow } from './model.ts';
import type { Inspection } from './inspect.ts';
import type { Rendition } from './render.ts';
import type { UploadReceipt } from './schemas.ts';
import { newObjectKey, type MediaStoreName } from './store.ts';

export interface NewVersionInput {
  stationId: string;
  /** An existing asset of the station, or absent for a new asset. */
  assetId?: string;
  mime: string;
  alt?: string;
  credits?: string;
  focalX?: number;
  focalY?: number;
  inspection: Inspection;
  /** The original, already durable in a store (the version id its key was made for, when given). */
  file: StoredFile;
  versionId?: string;
}

/** A file's bytes in a store, as a media_files row names them. */
export interface StoredFile {
  store: MediaStoreName;
  key: string;
  size: number;
  sha256: string;
}

/** Writes bytes already in memory (renditions, bundle media, kept artwork) to the current store. */
export async function storeBytes(
  svc: Pick<Services, 'media'>,
  versionId: string,
  variant: string,
  mime: string,
  bytes: Buffer,
): Promise<StoredFile> {
  const store = await svc.media.current();
  const key = newObjectKey(versionId, variant, mime);
  const stored = await store.put(key, Readable.from([bytes]), { mime, size: bytes.length });
  return { store: store.name, key, ...stored };
}

/** Removes stored files no row names (any longer); a failure is logged (the bytes are only orphaned). */
export async function discardFiles(
  svc: Pick<Services, 'media' | 'logger'>,
  files: Array<Pick<StoredFile, 'store' | 'key'>>,
): Promise<void> {
  for (const file of files) {
    try {
      await (await svc.media.get(file.store)).delete(file.key);
    } catch (err) {
      svc.logger.warn({ err, store: file.store, key: file.key }, 'could not remove a media object no file uses');
    }
  }
}

/** The columns of a media_files row that say where its bytes are. */
export const fileColumns = (file: StoredFile) => ({
  store: file.store,
  object_key: file.key,
  bytes: null,
  size: file.size,
  etag: etagOf(file.sha256),
});

/**
 * Stores an upload as a new version (of a new asset, or of the given one) with its original file, in
 * one transaction; an image's variants job is enqueued once that has committed.
 * The focal point given becomes the asset's; without one the version takes the asset's (centre for a
 * new asset). The asset's kind follows its latest version.
 */
export async function createMediaVersion(svc: Services, input: NewVersionInput): Promise<UploadReceipt> {
  const { stationId, inspection } = input;
  const now = svc.clock.now();
  const versionId = input.versionId ?? newId();
  const receipt = await inTransaction(svc.db, async (tx) => {
    const { trx } = tx;
    let assetId: string;
    let focal: FocalPoint;
    if (input.assetId) {
      const asset = await trx<MediaAssetRow>('media_assets').where({ id: input.assetId, station_id: stationId }).forUpdate().first();
      if (!asset) throw new NotFoundError('Media asset not found.');
      assetId = asset.id;
      focal = { x: input.focalX ?? asset.focal_x, y: input.focalY ?? asset.focal_y };
      await trx('media_assets').where({ id: assetId }).update({ kind: inspection.kind, focal_x: focal.x, focal_y: focal.y });
    } else {
      assetId = newId();
      focal = { x: input.focalX ?? CENTRE.x, y: input.focalY ?? CENTRE.y };
      await trx('media_assets').insert({
        id: assetId,
        station_id: stationId,
        kind: inspection.kind,
        focal_x: focal.x,
        focal_y: focal.y,
        created_at: now,
      });
    }
    await trx('media_versions').insert({
      id: versionId,
      asset_id: assetId,
      station_id: stationId,
      kind: inspection.kind,
      mime: input.mime,
      alt: input.alt ?? '',
      credits: input.credits ?? '',
      width: inspection.width,
      height: inspection.height,
      duration: inspection.duration,
      size: input.file.size,
      sha256: input.file.sha256,
      focal_x: focal.x,
      focal_y: focal.y,
      created_at: now,
    });
    await trx('media_files').insert({
      version_id: versionId,
      variant: 'original',
      mime: input.mime,
      width: inspection.width,
      height: inspection.height,
      ...fileColumns(input.file),
      created_at: now,
    });
    if (inspection.kind === 'image') tx.afterCommit(() => enqueueVariants(svc, stationId, versionId));
    return {
      assetId,
      versionId,
      kind: inspection.kind,
      mime: input.mime,
      width: inspection.width,
      height: inspection.height,
      duration: inspection.duration,
    };
  });
  return receipt;
}

/**
 * The job id is the version id, so an upload retried by BullMQ or enqueued twice renders once. The
 * version is already stored when this runs: a queue outage is logged, not reported as a failed upload
 * (the client would retry and create a duplicate version).
 */
async function enqueueVariants(svc: Services, stationId: string, versionId: string): Promise<void> {
  try {
    await svc.jobs.enqueue('media.variants', { stationId, versionId }, { jobId: versionId });
  } catch (err) {
    svc.logger.error({ err, stationId, versionId }, 'could not enqueue media variants');
  }
}

/**
 * Writes renditions of a version to the current store and names them in media_files, replacing earlier
 * ones (a re-run job overwrites); the objects they replace are removed once the rows no longer name them.
 */
export async function storeRenditions(
  svc: Pick<Services, 'db' | 'media' | 'logger'>,
  versionId: string,
  renditions: Rendition[],
  now: Date,
): Promise<void> {
  if (renditions.length === 0) return;
  const stored: StoredFile[] = [];
  try {
    for (const r of renditions) stored.push(await storeBytes(svc, versionId, r.variant, r.mime, r.bytes));
  } catch (err) {
    await discardFiles(svc, stored);
    throw err;
  }
  const replaced: Array<{ store: MediaStoreName; key: string }> = [];
  try {
    await svc.db.transaction(async (trx) => {
      const before = await trx('media_files')
        .where({ version_id: versionId })
        .whereIn(
          'variant',
          renditions.map((r) => r.variant),
        )
        .whereNotNull('object_key')
        .forUpdate()
        .select<Array<{ store: MediaStoreName; key: string }>>('store', 'object_key as key');
      for (const [i, r] of renditions.entries()) {
        await trx('media_files')
          .insert({
            version_id: versionId,
            variant: r.variant,
            mime: r.mime,
            width: r.width,
            height: r.height,
            ...fileColumns(stored[i]),
            created_at: now,
          })
          .onConflict(['version_id', 'variant'])
          .merge(['mime', 'width', 'height', 'size', 'etag', 'bytes', 'store', 'object_key', 'created_at']);
      }
      replaced.push(...before);
    });
  } catch (err) {
    await discardFiles(svc, stored);
    throw err;
  }
  await discardFiles(svc, replaced);
}
