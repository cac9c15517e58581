import { createHash } from 'node:crypto';
import type { Services } from '../../services.ts';
import { discardFiles, fileColumns, storeBytes, type StoredFile } from '../media/commands.ts';
import { newId } from '../../lib/ids.ts';
import { renderSquareVariants, type Rendition } from '../media/render.ts';
import { MAX_INPUT_PIXELS, type ArtworkImageRow } from './model.ts';

// A kept image: a media asset of the station, stored once per SHA-256 of its bytes, with its square
// renditions 300 / 600 / 1200 rendered before it is shown (so every variant URL answers at once). The
// published-media route serves it (listed_media lists it). The caller has looked for the bytes already
// (checks.ts); bytes kept meanwhile by another check are answered with the image kept first.

const mimeOf = (format: string): string => (format === 'heif' ? 'image/avif' : `image/${format}`);

export async function keepImage(
  svc: Pick<Services, 'db' | 'media' | 'logger'>,
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
  const { db } = svc;
  // The bytes are durable before the rows name them; a failed or lost race removes them again.
  const files: StoredFile[] = [];
  try {
    files.push(await storeBytes(svc, versionId, 'original', mime, bytes));
    for (const r of renditions) files.push(await storeBytes(svc, versionId, r.variant, r.mime, r.bytes));
  } catch (err) {
    await discardFiles(svc, files);
    throw err;
  }
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
      const file = (variant: string, mimeType: string, width: number, height: number, stored: StoredFile) => ({
        version_id: versionId,
        variant,
        mime: mimeType,
        width,
        height,
        ...fileColumns(stored),
        created_at: now,
      });
      await trx('media_files').insert([
        file('original', mime, image.width, image.height, files[0]),
        ...renditions.map((r, i) => file(r.variant, r.mime, r.width, r.height, files[i + 1])),
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
      await discardFiles(svc, files);
      if (!(err instanceof AlreadyKept)) throw err;
      return (await db<ArtworkImageRow>('artwork_images').where({ station_id: stationId, sha256 }).first()) as ArtworkImageRow;
    });
}

class AlreadyKept extends Error {}
