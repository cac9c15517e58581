import type { IncomingMessage } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../../lib/errors.ts';

// The upload body streams from the request to the media store (the route has no body parser): the limit
// is enforced while the bytes arrive, so an oversized upload is refused at the first byte past it (or
// at once when Content-Length already says so), and the store never keeps a refused or cut upload.

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

export interface BodyTap {
  /** null: take the next chunk at once; a promise: once it resolves. */
  write(chunk: Buffer): Promise<void> | null;
  end(): void;
}

/** The upload's bytes as they arrive, counted against the limit; `failure` says why the stream failed. */
export class UploadBody extends Transform {
  /** Set when the body was refused (413) or cut (400): the route answers that, not a store failure. */
  failure: PayloadTooLargeError | ValidationError | null = null;
  private received = 0;
  private readonly limit: number;
  private readonly req: IncomingMessage;
  /** Images are decoded by sharp, which needs them whole (at most 50 MiB). */
  private readonly kept: Buffer[] | null;

  /** Another reader of the bytes on the way (the audio duration probe); a promise holds the body back. */
  private readonly tap: BodyTap | null;

  constructor(req: IncomingMessage, limit: number, options: { keep?: boolean; tap?: BodyTap | null } = {}) {
    super();
    this.req = req;
    this.limit = limit;
    this.kept = options.keep ? [] : null;
    this.tap = options.tap ?? null;
    // The failure is read from `failure`; a refusal before the store listens must not go unhandled.
    this.on('error', () => {});
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      this.refuse();
      return;
    }
    req.on('close', () => {
      if (!req.complete && !this.failure) this.fail(new ValidationError('The upload was interrupted.'));
    });
    req.on('error', () => {
      if (!this.failure) this.fail(new ValidationError('The upload was interrupted.'));
    });
    req.pipe(this);
  }

  /** The whole body, when it was kept. */
  get bytes(): Buffer {
    if (!this.kept) throw new Error('this upload is not kept in memory');
    return Buffer.concat(this.kept, this.received);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.received += chunk.length;
    if (this.received > this.limit) {
      this.refuse();
      return done();
    }
    this.kept?.push(chunk);
    const wait = this.tap?.write(chunk);
    if (wait) void wait.then(() => done(null, chunk));
    else done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.tap?.end();
    done();
  }

  private refuse(): void {
    this.req.unpipe(this);
    discardRest(this.req);
    this.fail(tooLarge(this.limit));
  }

  private fail(err: PayloadTooLargeError | ValidationError): void {
    this.failure = err;
    this.destroy(err);
  }
}
