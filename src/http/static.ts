import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Context } from 'koa';
import { strongEtag, matchesIfNoneMatch } from './etag.ts';
import { NotFoundError } from '../lib/errors.ts';

// Pages and browser assets served from installed packages (no CDN: the reference page, GraphiQL and
// the widget work offline). Read once, on first use, and kept with their ETag.

const require = createRequire(import.meta.url);

/** The absolute path of a file inside an installed package, e.g. `packageFile('swagger-ui-dist', 'swagger-ui.css')`. */
export function packageFile(pkg: string, file: string): string {
  return require.resolve(`${pkg}/package.json`).replace(/package\.json$/, file);
}

export interface Asset {
  bytes: Buffer;
  type: string;
  etag: string;
}

export function asset(bytes: Buffer | string, type: string): Asset {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  return { bytes: buffer, type, etag: strongEtag(buffer) };
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.png': 'image/png',
};

/** A fixed set of files by public name; anything else is 404. */
export function assetTable(files: Record<string, string>): (name: string) => Asset {
  const loaded = new Map<string, Asset>();
  return (name) => {
    if (!Object.hasOwn(files, name)) throw new NotFoundError('No such file.');
    let found = loaded.get(name);
    if (!found) {
      const path = files[name];
      found = asset(readFileSync(path), TYPES[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream');
      loaded.set(name, found);
    }
    return found;
  };
}

/** Sends an asset with its ETag (304 on a match) and `Cache-Control` (revalidated unless told otherwise). */
export function sendAsset(ctx: Context, file: Asset, cacheControl = 'public, max-age=300'): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('ETag', file.etag);
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (matchesIfNoneMatch(ctx.get('if-none-match'), file.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = file.type;
  ctx.body = file.bytes;
}
