import { createHash } from 'node:crypto';
import type { Context } from 'koa';

/** Strong ETag: `"` + lowercase hex SHA-256 of the exact body bytes + `"`. */
export function strongEtag(bytes: Buffer | string): string {
  return `"${createHash('sha256').update(bytes).digest('hex')}"`;
}

/** If-None-Match: a list of tags (weak ones compare by their opaque part) or `*`. */
export function matchesIfNoneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((raw) => raw.trim().replace(/^W\//, '') === etag);
}

/** Sends bytes with their ETag, or 304 with no body when the client already has them. */
export function sendCacheable(ctx: Context, bytes: Buffer | string, contentType: string, etag = strongEtag(bytes)): void {
  ctx.set('ETag', etag);
  if (matchesIfNoneMatch(ctx.get('if-none-match'), etag)) {
    ctx.status = 304;
    ctx.body = null;
    return;
  }
  ctx.status = 200;
  ctx.type = contentType;
  ctx.body = bytes;
}

export function sendJson(ctx: Context, body: unknown): void {
  sendCacheable(ctx, Buffer.from(JSON.stringify(body)), 'application/json; charset=utf-8');
}
