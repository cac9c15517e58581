import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Digest, MediaStoreUnavailableError, type ByteRange, type MediaStore, type StoredObject } from '../store.ts';

// The filesystem store: one file per object under MEDIA_DIR (the embedded default's `.waveline/media`).
// A write goes to a temporary file beside its place, is flushed to the disk (fsync), then renamed into
// place and the folder synced: once put() resolves the bytes survive a crash, and a reader never sees
// half a file. A failed write removes its temporary file.

const PARTIAL = '.partial';

const isMissing = (err: unknown) => (err as { code?: string }).code === 'ENOENT';

export class FilesystemMediaStore implements MediaStore {
  readonly name = 'filesystem' as const;
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  private path(key: string): string {
    const path = join(this.dir, ...key.split('/'));
    if (relative(this.dir, path).startsWith('..')) throw new Error(`media key ${key} leaves the media folder`);
    return path;
  }

  async put(key: string, body: Readable, _options: { mime: string }): Promise<StoredObject> {
    const path = this.path(key);
    const temporary = `${path}.${randomBytes(6).toString('hex')}${PARTIAL}`;
    const digest = new Digest();
    try {
      await mkdir(dirname(path), { recursive: true });
      // `flush`: the file is fsync'ed before it is closed.
      await pipeline(body, digest, createWriteStream(temporary, { flush: true }));
      await rename(temporary, path);
      await syncFolder(dirname(path));
    } catch (err) {
      await rm(temporary, { force: true }).catch(() => undefined);
      throw body.errored ? err : storeFailure(err);
    }
    return digest.result();
  }

  async get(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const handle = await open(this.path(key), 'r');
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    } catch (err) {
      if (isMissing(err)) return null;
      throw storeFailure(err);
    }
  }

  async head(key: string): Promise<{ size: number } | null> {
    try {
      return { size: (await stat(this.path(key))).size };
    } catch (err) {
      if (isMissing(err)) return null;
      throw storeFailure(err);
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async *list(prefix = ''): AsyncIterable<{ key: string; size: number }> {
    let entries: string[];
    try {
      entries = await readdir(this.dir, { recursive: true });
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    for (const entry of entries) {
      if (entry.endsWith(PARTIAL)) continue;
      const key = entry.split(sep).join('/');
      if (!key.startsWith(prefix)) continue;
      const info = await stat(join(this.dir, entry)).catch(() => null);
      if (info?.isFile()) yield { key, size: info.size };
    }
  }

  publicPath(key: string): string {
    return key;
  }

  async close(): Promise<void> {}
}

/** The rename itself is durable only once the folder holding it is synced. */
async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A full disk, a read-only or missing mount: the store is unusable for now. */
function storeFailure(err: unknown): unknown {
  const code = (err as { code?: string }).code;
  if (code && ['ENOSPC', 'EROFS', 'EACCES', 'EPERM', 'EIO', 'EDQUOT', 'ENOENT', 'ENOTDIR'].includes(code)) {
    const unavailable = new MediaStoreUnavailableError('filesystem');
    unavailable.cause = err;
    return unavailable;
  }
  return err;
}
