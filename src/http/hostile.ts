import type { Issue } from '../lib/errors.ts';

// Input Postgres cannot store as text (NUL) or that is not Unicode (invalid UTF-8, lone surrogates) is
// refused with 400 at the edge, on every route, before any of it reaches a query: Postgres answers such
// text with an error, which would otherwise surface as a 500.

/** Any byte a plain request target never needs to carry unencoded, or a percent sign. */
const NEEDS_CHECK = /[%\u0000-\u0020\u007f-\uffff]/;
const RAW_BYTES = /[\u0000-\u0020\u007f-\uffff]/;

/** NUL, invalid UTF-8, broken percent-encoding or raw non-ASCII in the request target, else null. */
export function targetIssue(url: string): Issue | null {
  if (!NEEDS_CHECK.test(url)) return null;
  if (RAW_BYTES.test(url))
    return { path: 'url', code: 'invalid_format', message: 'the URL must be ASCII; percent-encode other bytes as UTF-8' };
  const q = url.indexOf('?');
  const parts: Array<[string, string]> =
    q < 0
      ? [['path', url]]
      : [
          ['path', url.slice(0, q)],
          ['query', url.slice(q + 1).replace(/\+/g, ' ')],
        ];
  for (const [part, text] of parts) {
    if (!text.includes('%')) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(text);
    } catch {
      return {
        path: part,
        code: 'invalid_format',
        message: `the ${part} must be percent-encoded UTF-8 (a stray %, or bytes that are not UTF-8)`,
      };
    }
    if (decoded.includes('\u0000')) return { path: part, code: 'invalid_format', message: `the ${part} must not contain NUL (%00)` };
  }
  return null;
}

/** Headers this service reads, whose grammar is ASCII: a byte outside it is a garbled request, not a value. */
const ASCII_HEADERS = new Set([
  'authorization',
  'x-preview-grant',
  'x-request-id',
  'if-none-match',
  'if-range',
  'range',
  'content-type',
  'content-encoding',
  'accept',
  'x-forwarded-for',
  'origin',
]);
const NOT_ASCII = /[^\t\x20-\x7e]/;

/** The first header we read that holds bytes outside printable ASCII (invalid UTF-8 among them), else null. */
export function headerIssue(rawHeaders: readonly string[]): Issue | null {
  for (let i = 1; i < rawHeaders.length; i += 2) {
    if (!NOT_ASCII.test(rawHeaders[i])) continue;
    const name = rawHeaders[i - 1].toLowerCase();
    if (ASCII_HEADERS.has(name))
      return { path: `headers.${name}`, code: 'invalid_format', message: `the ${name} header must be printable ASCII` };
  }
  return null;
}

/** NUL, or a UTF-16 surrogate without its pair (JSON's "\ud800"): text no database column holds. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const hasUnstorableText = (text: string): boolean => UNSTORABLE.test(text);

/** The path of the first string (value or key) in parsed JSON that holds unstorable text, else null. */
export function unstorableTextAt(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path || 'body' : null;
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableTextAt(value[i], path ? `${path}.${i}` : String(i));
      if (found) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (UNSTORABLE.test(key)) return at;
    const found = unstorableTextAt(item, at);
    if (found) return found;
  }
  return null;
}

export const unstorableIssue = (path: string): Issue => ({
  path,
  code: 'invalid_format',
  message: `${path} must be Unicode text without NUL (\\u0000) or unpaired surrogates`,
});
