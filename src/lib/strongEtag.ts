import { createHash } from 'node:crypto';

// Here, below the HTTP framework, because the read cache (readCache.ts) hashes each answer once when
// it stores it; http/etag.ts sends the same tags and hands this function on to the routes.

/** Strong ETag: `"` + lowercase hex SHA-256 of the exact body bytes + `"`. */
export function strongEtag(bytes: Buffer | string): string {
  return `"${createHash('sha256').update(bytes).digest('hex')}"`;
}
