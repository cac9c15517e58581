import type { Db } from '../../lib/db.ts';
import type { FileVariant, FocalPoint } from './model.ts';

// Reads of stored media. Listener reads never load more of a file than they send: small files come
// with their metadata in one query, larger ones are read in slices with `substring` (Postgres then
// fetches only the TOAST chunks that hold those bytes).

export interface PublicFile {
  mime: string;
  size: number;
  etag: string;
  /** The whole file when it is at most the inline size asked for; null otherwise. */
  bytes: Buffer | null;
}

/**
 * A file of a version that is public now: at least one currently published record of the station
 * references the version (published_media, kept by content publish/unpublish), or it is listed for
 * listeners otherwise (listed_media: kept artwork, program, presenter and station images).
 */
export async function findPublishedFile(
  db: Db,
  stationId: string,
  versionId: string,
  variant: FileVariant,
  inlineUpTo: number,
): Promise<PublicFile | null> {
  const result = await db.raw<{ rows: PublicFile[] }>(
    `SELECT f.mime, f.size, f.etag, CASE WHEN f.size <= :inlineUpTo THEN f.bytes END AS bytes
       FROM media_files f
      WHERE f.version_id = :versionId AND f.variant = :variant
        AND (EXISTS (SELECT 1 FROM published_media p WHERE p.version_id = f.version_id AND p.station_id = :stationId)
          OR EXISTS (SELECT 1 FROM listed_media l WHERE l.version_id = f.version_id AND l.station_id = :stationId))`,
    { inlineUpTo, versionId, variant, stationId },
  );
  return result.rows[0] ?? null;
}

/**
 * `length` bytes from `start` (0-based) of a stored file, only while it still has `etag`: a file
 * re-rendered mid-response gives a short read rather than a mix of two files.
 */
export async function readFileSlice(
  db: Db,
  versionId: string,
  variant: FileVariant,
  etag: string,
  start: number,
  length: number,
): Promise<Buffer | null> {
  const result = await db.raw<{ rows: Array<{ slice: Buffer }> }>(
    `SELECT substring(bytes FROM :from FOR :length) AS slice FROM media_files WHERE version_id = :versionId AND variant = :variant AND etag = :etag`,
    { from: start + 1, length, versionId, variant, etag },
  );
  return result.rows[0]?.slice ?? null;
}

export interface RenderSource {
  stationId: string;
  kind: string;
  focal: FocalPoint;
  /** Loaded for images only: other kinds have nothing to render. */
  original: Buffer | null;
}

/** What the variants job needs: the version's kind, its focal point and, for an image, the uploaded bytes. */
export async function findRenderSource(db: Db, versionId: string): Promise<RenderSource | null> {
  const row = await db('media_versions as v')
    .join('media_assets as a', 'a.id', 'v.asset_id')
    .where('v.id', versionId)
    .first<{ station_id: string; kind: string; focal_x: number; focal_y: number } | undefined>(
      'v.station_id',
      'v.kind',
      db.raw('COALESCE(v.focal_x, a.focal_x) AS focal_x'),
      db.raw('COALESCE(v.focal_y, a.focal_y) AS focal_y'),
    );
  if (!row) return null;
  const file =
    row.kind === 'image'
      ? await db('media_files').where({ version_id: versionId, variant: 'original' }).first<{ bytes: Buffer } | undefined>('bytes')
      : undefined;
  return { stationId: row.station_id, kind: row.kind, focal: { x: row.focal_x, y: row.focal_y }, original: file?.bytes ?? null };
}

export async function findAsset(db: Db, stationId: string, assetId: string): Promise<{ id: string } | null> {
  return (await db('media_assets').where({ id: assetId, station_id: stationId }).first('id')) ?? null;
}
