import type { Context } from 'koa';
import { matchesIfNoneMatch } from '../../http/etag.ts';
import { RangeNotSatisfiableError } from '../../lib/errors.ts';
import type { FileOpener, PublicFile } from './queries.ts';
import { planRange } from './range.ts';

// Sends a stored file: conditional requests, one byte range, HEAD, and the bytes streamed from where
// they are stored, so a response never holds more than a slice of a large file in memory.

/** Files kept in their row up to this size are fetched with their metadata in one query. */
export const INLINE_BYTES = 1024 * 1024;

const EMPTY = Buffer.alloc(0);

/**
 * Sends a published file's request to its public URL (MEDIA_PUBLIC_BASE_URL): 302 with `Location` and
 * the file's ETag; 304 still when `If-None-Match` matches. The CDN answers ranges and HEAD itself.
 */
export function redirectToFile(ctx: Context, file: PublicFile, url: string, cacheControl = 'private, no-store'): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('ETag', file.etag);
  if (matchesIfNoneMatch(ctx.get('if-none-match'), file.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.status = 302;
  ctx.set('Location', url);
  ctx.body = EMPTY;
}

/**
 * Answers a GET or HEAD for a file with `Cache-Control: private, no-store` (or `cacheControl`), `Accept-Ranges`, `ETag`
 * and `Content-Length`: 304 when `If-None-Match` matches, 206 for one satisfiable range, 416 for an
 * unsatisfiable one, else 200 with the whole file. HEAD answers exactly what GET would, without a body.
 */
export async function sendFile(ctx: Context, file: PublicFile, open: FileOpener, cacheControl = 'private, no-store'): Promise<void> {
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
    // Opened before any header is sent: a store that cannot be reached answers 503, not a cut body.
    ctx.body = await open({ start: plan.start, end: plan.end });
  }
  ctx.length = length;
}
