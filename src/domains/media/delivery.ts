import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { matchesIfNoneMatch } from '../../http/etag.ts';
import { RangeNotSatisfiableError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { PublicFile } from './queries.ts';
import { planRange } from './range.ts';

// Sends a stored file: conditional requests, one byte range, HEAD, and reading large files slice by
// slice so a response never holds more than one slice of it in memory.

/** Files up to this size are fetched with their metadata in one query; larger ones are streamed. */
export const INLINE_BYTES = 1024 * 1024;
/** Slice size when streaming a larger file. */
export const SLICE_BYTES = 1024 * 1024;

const EMPTY = Buffer.alloc(0);

export type SliceReader = (start: number, length: number) => Promise<Buffer | null>;

async function* slices(read: SliceReader, start: number, end: number, logger: Logger): AsyncGenerator<Buffer> {
  try {
    for (let at = start; at <= end; at += SLICE_BYTES) {
      const length = Math.min(SLICE_BYTES, end - at + 1);
      const slice = await read(at, length);
      // Gone or replaced since the response started: cut it short rather than mix two files.
      if (!slice || slice.length !== length) throw new Error('media file changed while it was being sent');
      yield slice;
    }
  } catch (err) {
    // Headers are out: the client sees a truncated body; the log says why.
    logger.error({ err }, 'streaming a media file failed');
    throw err;
  }
}

/**
 * Answers a GET or HEAD for a file with `Cache-Control: private, no-store` (or `cacheControl`), `Accept-Ranges`, `ETag`
 * and `Content-Length`: 304 when `If-None-Match` matches, 206 for one satisfiable range, 416 for an
 * unsatisfiable one, else 200 with the whole file. HEAD answers exactly what GET would, without a body.
 */
export function sendFile(ctx: Context, file: PublicFile, read: SliceReader, logger: Logger, cacheControl = 'private, no-store'): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('ETag', file.etag);
  // Bytes are shown as what they are, never sniffed into HTML, and an SVG opened directly runs no script.
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
  if (matchesIfNoneMatch(ctx.get('if-none-match'), file.etag)) {
    ctx.status = 304;
    return;
  }
  const plan = planRange({ range: ctx.get('range'), ifRange: ctx.get('if-range'), etag: file.etag, size: file.size });
  if (plan.status === 416) {
    ctx.set('Content-Range', `bytes */${file.size}`);
    throw new RangeNotSatisfiableError(`The requested range starts past the end of the file (${file.size} bytes).`);
  }
  const length = plan.end - plan.start + 1;
  ctx.status = plan.status;
  if (plan.status === 206) ctx.set('Content-Range', `bytes ${plan.start}-${plan.end}/${file.size}`);
  ctx.set('Content-Type', file.mime);
  if (ctx.method === 'HEAD') {
    ctx.body = EMPTY;
  } else if (file.bytes) {
    ctx.body = plan.status === 206 ? file.bytes.subarray(plan.start, plan.end + 1) : file.bytes;
  } else {
    ctx.body = Readable.from(slices(read, plan.start, plan.end, logger), { objectMode: false });
  }
  ctx.length = length;
}
