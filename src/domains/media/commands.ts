import { createHash } from 'node:crypto';
import { inTransaction, type Db } from '../../lib/db.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Services } from '../../services.ts';
import { CENTRE, etagOf, type FocalPoint, type MediaAssetRow } from './model.ts';
import type { Inspection } from './inspect.ts';
import type { Rendition } from './render.ts';
import type { UploadReceipt } from './schemas.ts';

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
  bytes: Buffer;
  sha256: string;
}

/**
 * Stores an upload as a new version (of a new asset, or of the given one) with its original file, in
 * one transaction; an image's variants job is enqueued once that has committed.
 * The focal point given becomes the asset's; without one the version takes the asset's (centre for a
 * new asset). The asset's kind follows its latest version.
 */
export async function createMediaVersion(svc: Services, input: NewVersionInput): Promise<UploadReceipt> {
  const { stationId, inspection } = input;
  const now = svc.clock.now();
  const versionId = newId();
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
      size: input.bytes.length,
      sha256: input.sha256,
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
      size: input.bytes.length,
      etag: etagOf(input.sha256),
      bytes: input.bytes,
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

/** Writes renditions of a version, replacing earlier ones (a re-run job overwrites). */
export async function storeRenditions(db: Db, versionId: string, renditions: Rendition[], now: Date): Promise<void> {
  if (renditions.length === 0) return;
  await db.transaction(async (trx) => {
    for (const r of renditions) {
      await trx('media_files')
        .insert({
          version_id: versionId,
          variant: r.variant,
          mime: r.mime,
          width: r.width,
          height: r.height,
          size: r.bytes.length,
          etag: etagOf(createHash('sha256').update(r.bytes).digest('hex')),
          bytes: r.bytes,
          created_at: now,
        })
        .onConflict(['version_id', 'variant'])
        .merge(['mime', 'width', 'height', 'size', 'etag', 'bytes', 'created_at']);
    }
  });
}
