import type { Context } from 'koa';
import { readLimited } from '../../http/body.ts';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../../lib/errors.ts';

// The ingest body: read by http/body.ts's `readLimited` (the 8 KiB limit holds while reading: a larger
// body is refused as soon as its declared length or its bytes pass it), with the ingest's own answers
// (only application/json, no Content-Encoding, a JSON object).

function tooLarge(ctx: Context, limit: number): PayloadTooLargeError {
  // The rest of the body stays unread; closing the connection keeps it from being drained.
  ctx.set('Connection', 'close');
  return new PayloadTooLargeError(`Request body must be at most ${limit} bytes.`);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function invalid(message: string): ValidationError {
  return new ValidationError('Invalid request body.', [{ path: 'body', code: 'invalid_json', message }]);
}

/** The request's JSON object body: 415 unless `application/json`, 413 over `limit` bytes, 400 unless a JSON object. */
export async function readJsonObject(ctx: Context, limit: number): Promise<Record<string, unknown>> {
  const mediaType = ctx.get('content-type').split(';')[0].trim().toLowerCase();
  if (mediaType !== 'application/json') throw new UnsupportedMediaTypeError('Content-Type must be application/json.');
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding && encoding !== 'identity') throw new UnsupportedMediaTypeError('Content-Encoding is not supported; send the JSON body uncompressed.');
  const declared = ctx.get('content-length');
  if (declared && Number(declared) > limit) throw tooLarge(ctx, limit);
  const bytes = await readLimited(ctx.req, limit);
  if (bytes === 'too-large') throw tooLarge(ctx, limit);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalid('body must be UTF-8 encoded JSON');
  }
  if (text.trim() === '') throw invalid('body must be a JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('body must be valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('body must be a JSON object');
  return parsed as Record<string, unknown>;
}
