import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { strongEtag } from '../lib/strongEtag.ts';
import type { UnkeptAnswer } from '../lib/readCache.ts';
import { CORS_EXPOSE_HEADERS } from './envelope.ts';

export { strongEtag };

/** If-None-Match: a list of tags (weak ones compare by their opaque part) or `*`. */
export function matchesIfNoneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true; // what a revalidating client sends: no split, no allocation
  if (header.trim() === '*') return true;
  return header.split(',').some((raw) => raw.trim().replace(/^W\//, '') === etag);
}

/**
 * Sends bytes with their ETag, or 304 with no body when the client already has them.
 *
 * This is the last step of every listener read, the hottest path of the service, so it writes the
 * status line with all its headers — the envelope's (request id, CORS, Cache-Control) and its own — in
 * one `writeHead` and ends the response itself (`ctx.respond = false`) instead of letting Koa assemble
 * the response header by header. Headers a gate set earlier (rate limit) are merged by Node.
 */
export function sendCacheable(
  ctx: Context,
  bytes: Buffer | string,
  contentType: string,
  etag = strongEtag(bytes),
  cacheControl = 'no-store',
): void {
  ctx.respond = false;
  const length = writeCacheable(ctx.req, ctx.res, ctx.state.requestId as string, bytes, contentType, etag, cacheControl);
  if (length > 0) ctx.state.responseBytes = length; // for the request log (observe.ts)
}

/** `sendCacheable` on the bare request and response (reads.ts answers cache hits without Koa); the body's length, 0 for a 304. */
export function writeCacheable(
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  bytes: Buffer | string,
  contentType: string,
  etag: string,
  /** Listener reads are `no-store`; public documents (RadioDNS SPI, logos) may be kept by caches. */
  cacheControl = 'no-store',
): number {
  if (matchesIfNoneMatch(req.headers['if-none-match'] ?? '', etag)) {
    res.writeHead(304, {
      'X-Request-Id': requestId,
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS,
      'Cache-Control': cacheControl,
      ETag: etag,
    });
    res.end();
    return 0;
  }
  const length = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  res.writeHead(200, {
    'X-Request-Id': requestId,
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS,
    'Cache-Control': cacheControl,
    ETag: etag,
    'Content-Type': contentType,
    'Content-Length': length,
  });
  res.end(bytes);
  return length;
}

/** Bytes without an ETag (a 200 unless `status` says otherwise): a GraphQL answer (GraphQL answers carry no ETag), with the headers Koa's path gives it. */
export function writeBytes(res: ServerResponse, requestId: string, bytes: Buffer, contentType: string, status = 200): number {
  res.writeHead(status, {
    'X-Request-Id': requestId,
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS,
    'Cache-Control': 'no-store',
    'Content-Type': contentType,
    'Content-Length': bytes.length,
  });
  res.end(bytes);
  return bytes.length;
}

/** A GraphQL run's answer that is not kept (an error's), for a request that waited for that run (cachedReads.ts). */
export function writeUnkept(res: ServerResponse, requestId: string, answer: UnkeptAnswer): number {
  if (answer.retryAfter !== undefined) res.setHeader('Retry-After', answer.retryAfter);
  return writeBytes(res, requestId, answer.bytes, answer.contentType, answer.status);
}

export function sendJson(ctx: Context, body: unknown): void {
  sendCacheable(ctx, Buffer.from(JSON.stringify(body)), 'application/json; charset=utf-8');
}
