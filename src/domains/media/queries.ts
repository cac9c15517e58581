import { Readable } from 'node:stream';
import type { Db } from '../../lib/db.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Services } from '../../services.ts';
import type { FileVariant, FocalPoint } from './model.ts';
import type { ByteRange, MediaStoreName } from './store.ts';

// Reads of stored media. Listener reads never load more of a file than they send: a file in a store is
// read for the range asked; a file kept in its row (stored before the stores) comes with its metadata in
// one query when small, else in slices with `substring` (Postgres then fetches only the TOAST chunks
// that hold those bytes).

export interface PublicFile {
  mime: string;
  size: number;
  etag: string;
  /** The whole file when it is kept in its row and at most the inline size asked for; null otherwise. */
  bytes: Buffer | null;
  /** Where the bytes are: a store and its key, or null for bytes kept in the row (files stored before the stores). */
  store: MediaStoreName | null;
  object_key: string | null;
}

/** The columns of a PublicFile, with the row's own bytes only up to `:inlineUpTo`. */
export const PUBLIC_FILE_COLUMNS = `f.mime, f.size, f.etag, f.store, f.object_key,
  CASE WHEN f.store IS NULL AND f.size <= :inlineUpTo THEN f.bytes END AS bytes`;

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
    `SELECT ${PUBLIC_FILE_COLUMNS}
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
export async function findRenderSource(svc: Pick<Services, 'db' | 'media'>, versionId: string): Promise<RenderSource | null> {
  const { db } = svc;
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
  const original = row.kind === 'image' ? await readWholeFile(svc, versionId, 'original') : null;
  return { stationId: row.station_id, kind: row.kind, focal: { x: row.focal_x, y: row.focal_y }, original };
}

export async function findAsset(db: Db, stationId: string, assetId: string): Promise<{ id: string } | null> {
  return (await db('media_assets').where({ id: assetId, station_id: stationId }).first('id')) ?? null;
}

/** A stored file whole, where it is (images for sharp: at most 50 MiB); null when there is no such file. */
export async function readWholeFile(svc: Pick<Services, 'db' | 'media'>, versionId: string, variant: FileVariant): Promise<Buffer | null> {
  const row = await svc
    .db('media_files')
    .where({ version_id: versionId, variant })
    .first<{ bytes: Buffer | null; store: MediaStoreName | null; object_key: string | null } | undefined>('bytes', 'store', 'object_key');
  if (!row) return null;
  if (!row.store || !row.object_key) return row.bytes;
  const stream = await (await svc.media.get(row.store)).get(row.object_key);
  if (!stream) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A file row names an object its store no longer has (re-rendered or moved since the row was read). */
export class MediaObjectMissingError extends Error {}

/** Opens bytes `range` of a file for sending; rejects when its store cannot be reached or no longer has it. */
export type FileOpener = (range: ByteRange) => Promise<Readable>;

/** How to read a file found by `findPublishedFile`, from its store or from its row. */
export function fileOpener(
  svc: Pick<Services, 'db' | 'media'>,
  file: PublicFile,
  versionId: string,
  variant: FileVariant,
  logger: Logger,
): FileOpener {
  const { store: name, object_key: key } = file;
  if (name && key)
    return async (range) => {
      const stream = await (await svc.media.get(name)).get(key, range);
      if (!stream) throw new MediaObjectMissingError(`media object ${name}:${key} is missing`);
      // Only the postgres store reads an object piece by piece after it opened it.
      if (name !== 'postgres') return stream;
      return Readable.from(followMoves(svc, stream, file, versionId, variant, range, logger), { objectMode: false });
    };
  return async (range) => Readable.from(rowSlices(svc, file, versionId, variant, range, logger), { objectMode: false });
}

/**
 * The bytes of a postgres-store object as it streams; when its chunks go mid-response (`waveline media
 * move --delete-source` moved the file meanwhile), the same bytes are read on from where its row names
 * now, while the row still has the ETag the response started with.
 */
async function* followMoves(
  svc: Pick<Services, 'db' | 'media'>,
  stream: Readable,
  file: PublicFile,
  versionId: string,
  variant: FileVariant,
  { start, end }: ByteRange,
  logger: Logger,
): AsyncGenerator<Buffer> {
  let at = start;
  try {
    for await (const chunk of stream) {
      at += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
    return;
  } catch (err) {
    const moved = await svc
      .db('media_files')
      .where({ version_id: versionId, variant, etag: file.etag })
      .whereNotNull('store')
      .whereRaw('NOT (store = ? AND object_key = ?)', [file.store, file.object_key])
      .first<{ store: MediaStoreName; object_key: string } | undefined>('store', 'object_key');
    const rest = moved && at <= end ? await (await svc.media.get(moved.store)).get(moved.object_key, { start: at, end }) : null;
    if (!rest) {
      logger.error({ err }, 'streaming a media file failed');
      throw err;
    }
    for await (const chunk of rest) yield chunk as Buffer;
  }
}

/** Slice size when streaming a file kept in its row. */
export const SLICE_BYTES = 1024 * 1024;

async function* rowSlices(
  svc: Pick<Services, 'db' | 'media'>,
  file: PublicFile,
  versionId: string,
  variant: FileVariant,
  { start, end }: ByteRange,
  logger: Logger,
): AsyncGenerator<Buffer> {
  try {
    for (let at = start; at <= end; at += SLICE_BYTES) {
      const length = Math.min(SLICE_BYTES, end - at + 1);
      const slice = await readFileSlice(svc.db, versionId, variant, file.etag, at, length);
      if (!slice) {
        // Moved to a store meanwhile (`waveline media move`): the same bytes are read on from there.
        const moved = await svc
          .db('media_files')
          .where({ version_id: versionId, variant, etag: file.etag })
          .whereNotNull('store')
          .first<{ store: MediaStoreName; object_key: string } | undefined>('store', 'object_key');
        const rest = moved ? await (await svc.media.get(moved.store)).get(moved.object_key, { start: at, end }) : null;
        if (!rest) throw new Error('media file changed while it was being sent');
        for await (const chunk of rest) yield chunk as Buffer;
        return;
      }
      // Replaced since the response started: cut it short rather than mix two files.
      if (slice.length !== length) throw new Error('media file changed while it was being sent');
      yield slice;
    }
  } catch (err) {
    // Headers are out: the client sees a truncated body; the log says why.
    logger.error({ err }, 'streaming a media file failed');
    throw err;
  }
}
