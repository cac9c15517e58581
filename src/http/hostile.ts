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

/**
 * How deep a JSON body may nest (objects and arrays inside one another). No payload of this API comes
 * near it; past it, code that walks a value recursively (JSON.stringify, the checks here, Postgres' jsonb)
 * would run out of stack, and JSON.parse alone does not.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * The first problem in parsed JSON no route can take, else null: nesting deeper than MAX_JSON_DEPTH, or
 * a string (value or key) holding unstorable text. Walks the value with a stack of its own, in document
 * order, so no input can exhaust the call stack; `root` prefixes the issue's path.
 */
export function jsonIssue(value: unknown, root = ''): Issue | null {
  // Each entry is a value still to look at, with its key when it is an object member (keys are text too).
  const pending: Array<{ value: unknown; path: string; depth: number; key?: string }> = [{ value, path: root, depth: 0 }];
  while (pending.length > 0) {
    const { value: item, path, depth, key } = pending.pop()!;
    if (key !== undefined && UNSTORABLE.test(key)) return unstorableIssue(path);
    if (typeof item === 'string') {
      if (UNSTORABLE.test(item)) return unstorableIssue(path || 'body');
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    if (depth === MAX_JSON_DEPTH)
      return { path: path || 'body', code: 'too_deep', message: `JSON may nest at most ${MAX_JSON_DEPTH} levels deep` };
    const members = Array.isArray(item) ? item.map((v, i): [string, unknown] => [String(i), v]) : Object.entries(item);
    for (let i = members.length - 1; i >= 0; i--) {
      const [name, member] = members[i];
      pending.push({ value: member, path: path ? `${path}.${name}` : name, depth: depth + 1, key: Array.isArray(item) ? undefined : name });
    }
  }
  return null;
}

export const unstorableIssue = (path: string): Issue => ({
  path,
  code: 'invalid_format',
  message: `${path} must be Unicode text without NUL (\\u0000) or unpaired surrogates`,
});
