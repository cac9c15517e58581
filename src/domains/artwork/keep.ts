import { createHash } from 'node:crypto';
import type { Db } from '../../lib/db.ts';
import { newId } from '../../lib/ids.ts';
import { etagOf } from '../media/model.ts';
import { renderSquareVariants, type Rendition } from '../media/render.ts';
import { MAX_INPUT_PIXELS, type ArtworkImageRow } from './model.ts';

// A kept image: a media asset of the station, stored once per SHA-256 of its bytes, with its square
// renditions 300 / 600 / 1200 rendered before it is shown (so every variant URL answers at once). The
// published-media route serves it (listed_media lists it). The caller has looked for the bytes already
// (checks.ts); bytes kept meanwhile by another check are answered with the image kept first.

const mimeOf = (format: string): string => (format === 'heif' ? 'image/avif' : `image/${format}`);

export async function keepImage(
  db: Db,
  stationId: string,
  bytes: Buffer,
  image: { width: number; height: number; dhash: string; format: string; renditions: Rendition[] | null },
  now: Date,
): Promise<ArtworkImageRow> {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const renditions = image.renditions ?? (await renderSquareVariants(bytes, MAX_INPUT_PIXELS));
  const assetId = newId();
  const versionId = newId();
  const mime = mimeOf(image.format);
  return db
    .transaction(async (trx) => {
      await trx('media_assets').insert({ id: assetId, station_id: stationId, kind: 'image', focal_x: 0.5, focal_y: 0.5, created_at: now });
      await trx('media_versions').insert({
        id: versionId,
        asset_id: assetId,
        station_id: stationId,
        kind: 'image',
        mime,
        alt: '',
        credits: '',
        width: image.width,
        height: image.height,
        duration: null,
        size: bytes.length,
        sha256,
        focal_x: 0.5,
        focal_y: 0.5,
        created_at: now,
      });
      const file = (variant: string, mimeType: string, width: number, height: number, content: Buffer) => ({
        version_id: versionId,
        variant,
        mime: mimeType,
        width,
        height,
        size: content.length,
        etag: etagOf(createHash('sha256').update(content).digest('hex')),
        bytes: content,
        created_at: now,
      });
      await trx('media_files').insert([
        file('original', mime, image.width, image.height, bytes),
        ...renditions.map((r) => file(r.variant, r.mime, r.width, r.height, r.bytes)),
      ]);
      const row: ArtworkImageRow = {
        id: newId(),
        station_id: stationId,
        sha256,
        version_id: versionId,
        width: image.width,
        height: image.height,
        dhash: image.dhash,
        created_at: now,
      };
      // Kept twice at once (two URLs, one picture): the first one stays, this asset goes with the rollback.
      const inserted = await trx('artwork_images').insert(row).onConflict(['station_id', 'sha256']).ignore().returning('id');
      if (inserted.length === 0) throw new AlreadyKept();
      return row;
    })
    .catch(async (err: unknown) => {
      if (!(err instanceof AlreadyKept)) throw err;
      return (await db<ArtworkImageRow>('artwork_images').where({ station_id: stationId, sha256 }).first()) as ArtworkImageRow;
    });
}

class AlreadyKept extends Error {}
