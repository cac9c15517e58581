import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import type { FileVariant } from './model.ts';
import { readFileSlice, SLICE_BYTES } from './queries.ts';
import { Digest, newObjectKey, type MediaStore, type MediaStoreName, type StoredObject } from './store.ts';

// `waveline media move --to <store>` (docs/media.md, "Moving an archive"): copies every file to another
// store, checks each copy's SHA-256 against the file's ETag, and only then points its row at the copy
// (one UPDATE, guarded by the ETag and the old place, so a file re-rendered meanwhile keeps its new
// bytes). Listeners keep being served throughout: a row names either the old bytes, still there, or
// the verified copy. Interrupted, it resumes where it stopped: moved rows no longer qualify. With
// `deleteSource` (`--delete-source`) the copy is also read back from the target and hashed again, and the
// old object is removed once the row points at the copy.

export interface MoveProgress {
  files: number;
  bytes: number;
  totalFiles: number;
  totalBytes: number;
}

export interface MoveResult extends MoveProgress {
  failed: Array<{ versionId: string; variant: string; reason: string }>;
}

interface FileRow {
  version_id: string;
  station_id: string;
  variant: FileVariant;
  mime: string;
  size: number;
  etag: string;
  store: MediaStoreName | null;
  object_key: string | null;
}

const BATCH = 100;

/** Files not in `to` yet (rows that keep their bytes count too, when moving to postgres); of one station when given. */
function remaining(db: Db, to: MediaStoreName, stationId?: string) {
  const query = db('media_files').where((q) => q.whereNull('store').orWhereNot('store', to));
  if (stationId) query.whereIn('version_id', db('media_versions').where({ station_id: stationId }).select('id'));
  return query;
}

async function* rowBytes(db: Db, file: FileRow): AsyncGenerator<Buffer> {
  for (let at = 0; at < file.size; at += SLICE_BYTES) {
    const slice = await readFileSlice(db, file.version_id, file.variant, file.etag, at, Math.min(SLICE_BYTES, file.size - at));
    if (!slice) throw new Error('the file changed while it was copied');
    yield slice;
  }
}

async function source(svc: Pick<Services, 'db' | 'media'>, file: FileRow): Promise<Readable> {
  if (!file.store || !file.object_key) return Readable.from(rowBytes(svc.db, file), { objectMode: false });
  const stream = await (await svc.media.get(file.store)).get(file.object_key);
  if (!stream) throw new Error(`the ${file.store} store has no object ${file.object_key}`);
  return stream;
}

/** The size and SHA-256 of an object as the store gives it back; null when it has none. */
async function readBack(store: MediaStore, key: string): Promise<StoredObject | null> {
  const stream = await store.get(key);
  if (!stream) return null;
  const digest = new Digest();
  await pipeline(stream, digest, new Writable({ write: (_chunk, _encoding, done) => done() }));
  return digest.result();
}

const matches = (stored: StoredObject | null, file: FileRow) =>
  stored !== null && stored.size === Number(file.size) && `"${stored.sha256}"` === file.etag;

/**
 * Puts a verified copy of the file at `key` in the target. One already there (left by an earlier move
 * back and forth, or a run cut short) is used when it gives back the very bytes, and replaced otherwise:
 * a listener still reading that old copy is never cut by rewriting it.
 */
async function placeCopy(svc: Pick<Services, 'db' | 'media'>, target: MediaStore, file: FileRow, key: string, deleteSource: boolean) {
  const existing = await target.head(key);
  if (existing && existing.size === Number(file.size) && matches(await readBack(target, key), file)) return null;
  if (existing) await target.delete(key);
  const stored = await target.put(key, await source(svc, file), { mime: file.mime, size: file.size });
  if (!matches(stored, file)) {
    await target.delete(key);
    return `the copy's SHA-256 or size differs (${stored.size} bytes, ${stored.sha256})`;
  }
  // The source goes only once the target gives back the very bytes: read again and hashed there.
  if (deleteSource && !matches(await readBack(target, key), file)) {
    await target.delete(key);
    return 'the copy read back from the target differs';
  }
  return null;
}

type MoveServices = Pick<Services, 'db' | 'media' | 'logger'> & Partial<Pick<Services, 'invalidation'>>;

async function copy(svc: MoveServices, target: MediaStore, file: FileRow, deleteSource: boolean): Promise<string | null> {
  const key = file.object_key ?? newObjectKey(file.version_id, file.variant, file.mime);
  const problem = await placeCopy(svc, target, file, key, deleteSource);
  if (problem) return problem;
  const updated = await svc
    .db('media_files')
    .where({ version_id: file.version_id, variant: file.variant, etag: file.etag })
    .where((q) => (file.store ? q.where({ store: file.store, object_key: file.object_key }) : q.whereNull('store')))
    .update({ store: target.name, object_key: key, bytes: null });
  if (updated === 0) {
    // Replaced while it was copied: the new bytes stay where they were written.
    await target.delete(key);
    return 'the file was replaced while it was copied';
  }
  // Web processes that keep where this station's files are look again (publishedCache.ts) before the old copy goes.
  await svc.invalidation?.invalidate('media-files', file.station_id).catch(() => undefined);
  if (deleteSource && file.store && file.object_key) await (await svc.media.get(file.store)).delete(file.object_key);
  return null;
}

export async function moveMedia(
  svc: MoveServices,
  to: MediaStoreName,
  onProgress: (progress: MoveProgress) => void = () => {},
  options: { stopAfter?: number; stationId?: string; deleteSource?: boolean } = {},
): Promise<MoveResult> {
  const target = await svc.media.get(to);
  const totals = await remaining(svc.db, to, options.stationId).first<{ n: number; size: number | null }>(
    svc.db.raw('count(*)::int AS n'),
    svc.db.raw('sum(size)::bigint AS size'),
  );
  const result: MoveResult = { files: 0, bytes: 0, totalFiles: totals?.n ?? 0, totalBytes: Number(totals?.size ?? 0), failed: [] };
  onProgress(result);
  let after: [string, string] | null = null;
  for (;;) {
    const query = remaining(svc.db, to, options.stationId)
      .orderBy([{ column: 'version_id' }, { column: 'variant' }])
      .limit(BATCH);
    if (after) query.whereRaw('(version_id, variant) > (?, ?)', after);
    const files: FileRow[] = await query.select(
      'version_id',
      svc.db.raw('(SELECT v.station_id FROM media_versions v WHERE v.id = media_files.version_id) AS station_id'),
      'variant',
      'mime',
      'size',
      'etag',
      'store',
      'object_key',
    );
    if (files.length === 0) break;
    for (const file of files) {
      if (options.stopAfter !== undefined && result.files >= options.stopAfter) return result;
      const problem = await copy(svc, target, file, options.deleteSource ?? false).catch((err: unknown) =>
        err instanceof Error ? err.message : String(err),
      );
      if (problem) {
        result.failed.push({ versionId: file.version_id, variant: file.variant, reason: problem });
        svc.logger.warn({ versionId: file.version_id, variant: file.variant, reason: problem }, 'media move: file not moved');
      }
      result.files += 1;
      result.bytes += Number(file.size);
      onProgress(result);
      after = [file.version_id, file.variant];
    }
  }
  return result;
}
