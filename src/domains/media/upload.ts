import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { readLimited } from '../../http/body.ts';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../../lib/errors.ts';

// The upload body is read from the request stream by http/body.ts's `readLimited` (the route has no body parser): the limit is
// enforced while the bytes arrive, so an oversized upload is refused at the first byte past it (or at
// once when Content-Length already says so) and never held in memory.

/**
 * After a refusal the rest of the body is read and dropped, so that the client, still sending, gets to
 * read the 413 (closing at once makes many HTTP clients report a broken pipe instead). Past this much
 * the connection is cut.
 */
const DISCARD_LIMIT = 64 * 1024 * 1024;

const MIME_ESSENCE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/** Some editors send these; listeners should get the registered type. */
const MIME_ALIASES: Record<string, string> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg' };

/** The media type of the upload from its Content-Type (parameters dropped, lower-cased). */
export function uploadMime(contentType: string, contentEncoding: string): string {
  if (!contentType) {
    throw new ValidationError('Content-Type is required: it names the media type of the uploaded bytes.', [
      { path: 'headers.content-type', code: 'required', message: 'Content-Type must name the media type of the body, e.g. image/jpeg' },
    ]);
  }
  const essence = contentType.split(';')[0].trim().toLowerCase();
  if (!MIME_ESSENCE.test(essence)) {
    throw new ValidationError('Content-Type is not a media type.', [
      { path: 'headers.content-type', code: 'invalid_format', message: 'Content-Type must be a media type such as image/jpeg' },
    ]);
  }
  if (essence.startsWith('multipart/'))
    throw new UnsupportedMediaTypeError('Send the file’s raw bytes as the body with their own Content-Type, not a form.');
  if (contentEncoding && contentEncoding.trim().toLowerCase() !== 'identity') {
    throw new UnsupportedMediaTypeError('Send the file’s bytes without a Content-Encoding.');
  }
  return MIME_ALIASES[essence] ?? essence;
}

const tooLarge = (limit: number) => new PayloadTooLargeError(`The upload is larger than ${limit} bytes (${limit / 1024 / 1024} MiB).`);

function discardRest(req: IncomingMessage): void {
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_LIMIT) req.destroy();
  });
  req.on('error', () => {}); // a client hanging up now is expected
  req.resume();
}

export interface Upload {
  bytes: Buffer;
  sha256: string;
}

/** Reads the whole body, at most `limit` bytes, hashing it on the way. */
export function readUpload(req: IncomingMessage, limit: number): Promise<Upload> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    discardRest(req);
    return Promise.reject(tooLarge(limit));
  }
  const hash = createHash('sha256');
  return readLimited(req, limit, (chunk) => hash.update(chunk)).then(
    (bytes) => {
      if (bytes !== 'too-large') return { bytes, sha256: hash.digest('hex') };
      discardRest(req);
      throw tooLarge(limit);
    },
    () => {
      throw new ValidationError('The upload was interrupted.');
    },
  );
}
