import { createHash, randomBytes } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { MediaStoreName } from '../../config.ts';
import { ProviderUnavailableError } from '../../lib/errors.ts';

// Where media bytes live (docs/media.md, "Stores"): one interface, one file per store under stores/.
// Every object is written once under a key nobody references yet, and referenced by a media_files row
// only once it is durable; a failed write leaves nothing under its key.

export type { MediaStoreName } from '../../config.ts';
export const MEDIA_STORE_NAMES: readonly MediaStoreName[] = ['postgres', 'filesystem', 's3'];

export interface StoredObject {
  size: number;
  /** Lowercase hex SHA-256 of the bytes as they were stored, computed while they streamed in. */
  sha256: string;
}

/** Inclusive byte positions, as in `Content-Range`. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface MediaStore {
  readonly name: MediaStoreName;
  /**
   * Streams `body` to `key` and resolves once the bytes are durable. On any failure (the body's own
   * error included, which it rejects with) nothing is left under `key`.
   */
  put(key: string, body: Readable, options: { mime: string; size?: number }): Promise<StoredObject>;
  /** The bytes of `range` (all when absent) as a stream; null when there is no such object. */
  get(key: string, range?: ByteRange): Promise<Readable | null>;
  /** The object's size; null when there is none. */
  head(key: string): Promise<{ size: number } | null>;
  /** Removes the object; nothing to remove is not an error. */
  delete(key: string): Promise<void>;
  /** Every object under `prefix` (all when empty), in no particular order. */
  list(prefix?: string): AsyncIterable<{ key: string; size: number }>;
  /**
   * The path of the object under MEDIA_PUBLIC_BASE_URL when the store's objects can be served from
   * there (a bucket or folder behind a CDN); null for the postgres store.
   */
  publicPath(key: string): string | null;
  /** A pre-signed PUT for `key`, when the store takes bytes straight from a client (S3). */
  presignPut?(
    key: string,
    options: { mime: string; size: number; expiresInSeconds: number },
  ): Promise<{ url: string; headers: Record<string, string> }>;
  close(): Promise<void>;
}

/** The store cannot be reached or refused to work: nothing was stored; retry shortly. */
export class MediaStoreUnavailableError extends ProviderUnavailableError {
  readonly retryAfterSeconds: number;
  constructor(store: MediaStoreName, retryAfterSeconds = 5) {
    super(`The media store (${store}) is temporarily unavailable; retry shortly.`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Hashes and counts the bytes passing through. */
export class Digest extends Transform {
  private readonly hash = createHash('sha256');
  // Not `size`: lib-storage would read it as the body's length.
  private count = 0;
  private hex: string | null = null;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.count += chunk.length;
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.hex = this.hash.digest('hex');
    done();
  }

  /** Only once the stream has ended. */
  result(): StoredObject {
    if (this.hex === null) throw new Error('the digest is known only once every byte went through');
    return { size: this.count, sha256: this.hex };
  }
}

const EXTENSIONS: Record<string, string> = {
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/x-m4a': 'm4a',
  'audio/aac': 'aac',
  'audio/ogg': 'ogg',
  'audio/opus': 'opus',
  'audio/flac': 'flac',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/webm': 'weba',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/avif': 'avif',
  'image/tiff': 'tif',
  'image/svg+xml': 'svg',
  'application/pdf': 'pdf',
};

/**
 * The key of a new object: `{versionId}/{variant}-{random}.{ext}`. Unique per write, so a
 * re-rendered variant never overwrites bytes a response is reading, and readable on a CDN (podcast apps
 * like an enclosure URL ending in `.mp3`).
 */
export function newObjectKey(versionId: string, variant: string, mime: string): string {
  const ext = EXTENSIONS[mime] ?? 'bin';
  return `${versionId}/${variant}-${randomBytes(6).toString('hex')}.${ext}`;
}
