import { ValidationError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { versionHash } from './blocked.ts';
import { fetchImage } from './checks.ts';
import { dhashOf, hammingDistance } from './dhash.ts';
import { FAILURE_MEMORY_MS, SAME_PICTURE_DISTANCE, type ArtworkBlockRow, type ArtworkImageRow } from './model.ts';
import { refreshTrackArt } from './refresh.ts';
import type { Block, BlockBody } from './schemas.ts';
import { pinsChanged } from './pinCache.ts';

// Blocked images (docs/now-playing.md#how-an-operator-fixes-wrong-art-in-one-call): from the block on, that
// picture (by dHash) never shows as track art. Kept images within distance 6 stop showing at once: the checks
// and pins that kept them turn `rejected` / `blocked`, and the tracks showing them are resolved again.

export const presentBlock = (row: ArtworkBlockRow): Block => ({ id: row.id, hash: row.hash, createdAt: row.created_at.toISOString() });

async function hashOf(svc: Services, station: Station, body: BlockBody): Promise<string> {
  if ('versionId' in body) {
    const hash = await versionHash(svc, station.id, body.versionId.toLowerCase());
    if (!hash)
      throw new ValidationError('versionId is not an uploaded image version of this station.', [
        { path: 'versionId', code: 'unknown', message: 'must be an uploaded image version of this station' },
      ]);
    return hash;
  }
  let problem: string | null = null;
  try {
    const url = new URL(body.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') problem = 'must be an http or https URL';
  } catch {
    problem = 'must be an absolute URL';
  }
  if (problem) throw new ValidationError(`url ${problem}.`, [{ path: 'url', code: 'format', message: problem }]);
  const fetched = await fetchImage(svc, body.url);
  const invalid = (message: string) => new ValidationError(`url ${message}.`, [{ path: 'url', code: 'unreadable', message }]);
  if (!fetched.ok) throw invalid(`could not be fetched (${fetched.failure})`);
  try {
    return await dhashOf(fetched.bytes);
  } catch {
    throw invalid('is not an image sharp can decode');
  }
}

export async function createBlock(svc: Services, station: Station, body: BlockBody): Promise<Block> {
  const hash = await hashOf(svc, station, body);
  const now = svc.clock.now();
  const row: ArtworkBlockRow = {
    id: newId(),
    station_id: station.id,
    hash,
    url: 'url' in body ? body.url : null,
    version_id: 'versionId' in body ? body.versionId.toLowerCase() : null,
    created_at: now,
  };
  await svc.db('artwork_blocks').insert(row);
  const images: ArtworkImageRow[] = await svc.db('artwork_images').where({ station_id: station.id });
  const hit = images.filter((image) => hammingDistance(image.dhash, hash) <= SAME_PICTURE_DISTANCE).map((image) => image.id);
  if (hit.length) {
    const expires = new Date(now.getTime() + FAILURE_MEMORY_MS);
    await svc
      .db('artwork_checks')
      .where({ station_id: station.id })
      .whereIn('image_id', hit)
      .update({ status: 'rejected', reason: 'blocked', image_id: null, checked_at: now, expires_at: expires });
    await svc
      .db('artwork_pins')
      .where({ station_id: station.id })
      .whereIn('image_id', hit)
      .update({ status: 'rejected', reason: 'blocked', image_id: null });
    await pinsChanged(svc, station.id);
    await refreshTrackArt(svc, station, (q) => q.whereRaw(`artwork_view->>'imageId' = ANY(?)`, [hit]));
  }
  return presentBlock(row);
}

/**
 * Removes a block. Images it refused are checked again when next needed: their remembered `blocked`
 * results are forgotten now.
 */
export async function deleteBlock(svc: Services, station: Station, blockId: string): Promise<boolean> {
  const removed = await svc.db('artwork_blocks').where({ station_id: station.id, id: blockId }).delete();
  if (!removed) return false;
  await svc.db('artwork_checks').where({ station_id: station.id, reason: 'blocked' }).delete();
  return true;
}
