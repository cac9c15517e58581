import type { Db } from '../../lib/db.ts';
import { mediaBasePath } from '../stations/presenter.ts';
import { SQUARE_VARIANTS, type SquareVariant } from './model.ts';

// Absolute URLs of an image version and its square renditions (`artwork.url` and every
// variant URL are absolute: docs/now-playing.md#what-an-app-shows-for-each-source), and the `image` of a
// program or presenter.

export interface ImageRef {
  url: string;
  variants: Record<SquareVariant, string>;
}

export function imageRef(publicBaseUrl: string, stationId: string, versionId: string): ImageRef {
  const base = `${publicBaseUrl.replace(/\/+$/, '')}${mediaBasePath(stationId)}${versionId}`;
  const variants = {} as ImageRef['variants'];
  for (const side of SQUARE_VARIANTS) variants[side] = `${base}/${side}`;
  return { url: base, variants };
}

/** An uploaded image version of the station with its size; null when it is not one. */
export async function stationImageVersion(
  db: Db,
  stationId: string,
  versionId: string,
): Promise<{ id: string; width: number | null; height: number | null } | null> {
  const row = await db('media_versions')
    .where({ id: versionId, station_id: stationId, kind: 'image' })
    .first<{ id: string; width: number | null; height: number | null } | undefined>('id', 'width', 'height');
  return row ?? null;
}
