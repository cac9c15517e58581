import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { Context } from 'koa';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../lib/errors.ts';
import { jsonIssue } from './hostile.ts';

/**
 * THE body reader with a size limit (JSON bodies here, the ingest body, media uploads): reads `source`
 * whole, refusing at the first chunk that takes it past `limit` bytes — the answer is then `'too-large'`
 * with the stream paused and nothing more buffered, and the caller decides what becomes of the rest
 * (close the connection, or drain it so the client reads the 413). `onChunk` sees each accepted chunk
 * (the upload hashes on the way). Rejects when the stream fails or closes before its end.
 */
export function readLimited(source: Readable, limit: number, onChunk?: (chunk: Buffer) => void): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        source.pause();
        resolve('too-large');
        return;
      }
      onChunk?.(chunk);
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => {
      if ((source as Partial<IncomingMessage>).complete) return;
      cleanup();
      reject(new Error('the request closed before its body was complete'));
    };
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    source.on('close', onClose);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const JSON_TYPES = ['json', '+json', 'application/csp-report'];

/** `'1mb'`, `'64kb'` or a number of bytes. */
export function byteLimit(limit: string | number): number {
  if (typeof limit === 'number') return limit;
  const match = /^(\d+)(kb|mb)?$/i.exec(limit.trim());
  if (!match) throw new Error(`bad body limit ${limit}`);
  return Number(match[1]) * (match[2]?.toLowerCase() === 'mb' ? 1024 * 1024 : match[2] ? 1024 : 1);
}

const notJson = (message: string) =>
  new ValidationError('Request body is not valid JSON.', [{ path: 'body', code: 'invalid_json', message }]);

/**
 * A JSON request body (any JSON value), or undefined when the request has no body (the route then
 * validates `{}`); 400 for a body of another Content-Type. 413 past `limit` bytes (after gzip/deflate), 415 for another
 * Content-Encoding, 400 for bytes that are not UTF-8 or not JSON, 400 for text no column can hold
 * (NUL, unpaired surrogates) anywhere in it — Postgres would refuse it with an error — and 400 for JSON
 * nested deeper than MAX_JSON_DEPTH (hostile.ts).
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const json = ctx.request.is(JSON_TYPES);
  if (json === false && ctx.request.length !== 0) {
    // A body in another type would otherwise be dropped and `{}` validated, with misleading issues.
    throw new ValidationError('Invalid request body.', [
      { path: 'body', code: 'invalid_json', message: 'the body must be JSON, sent with Content-Type: application/json' },
    ]);
  }
  if (!json) return undefined;
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  let source: Readable = ctx.req;
  if (encoding === 'gzip') source = ctx.req.pipe(createGunzip());
  else if (encoding === 'deflate') source = ctx.req.pipe(createInflate());
  else if (encoding !== 'identity') throw new UnsupportedMediaTypeError(`Content-Encoding ${encoding} is not supported.`);
  const declared = Number(ctx.get('content-length'));
  if (encoding === 'identity' && Number.isFinite(declared) && declared > limit) {
    ctx.set('Connection', 'close');
    throw new PayloadTooLargeError('Request body is too large.');
  }
  let bytes: Buffer | 'too-large';
  try {
    bytes = await readLimited(source, limit);
  } catch {
    throw notJson('body could not be decompressed');
  }
  if (bytes === 'too-large') {
    ctx.set('Connection', 'close');
    throw new PayloadTooLargeError('Request body is too large.');
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw notJson('body must be UTF-8 encoded JSON');
  }
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw notJson('body must be valid JSON');
  }
  const issue = jsonIssue(parsed);
  if (issue) throw new ValidationError('Invalid request body.', [issue]);
  return parsed;
}

function tooLargeFor(ctx: Context, limit: number): PayloadTooLargeError {
  // The rest of the body stays unread; closing the connection keeps it from being drained.
  ctx.set('Connection', 'close');
  return new PayloadTooLargeError(`Request body must be at most ${limit} bytes.`);
}

function notAnObject(message: string): ValidationError {
  return new ValidationError('Invalid request body.', [{ path: 'body', code: 'invalid_json', message }]);
}

/**
 * A strict JSON object body (`bodyParser: 'json-object'`, what encoders send to ingest): 415 unless
 * `Content-Type: application/json` without a Content-Encoding, 413 past `limit` bytes (refused as soon as
 * the declared length or the bytes read pass it), 400 unless UTF-8 JSON holding an object.
 */
export async function readJsonObject(ctx: Context, limit: number): Promise<Record<string, unknown>> {
  const mediaType = ctx.get('content-type').split(';')[0].trim().toLowerCase();
  if (mediaType !== 'application/json') throw new UnsupportedMediaTypeError('Content-Type must be application/json.');
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding && encoding !== 'identity')
    throw new UnsupportedMediaTypeError('Content-Encoding is not supported; send the JSON body uncompressed.');
  const declared = ctx.get('content-length');
  if (declared && Number(declared) > limit) throw tooLargeFor(ctx, limit);
  const bytes = await readLimited(ctx.req, limit);
  if (bytes === 'too-large') throw tooLargeFor(ctx, limit);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw notAnObject('body must be UTF-8 encoded JSON');
  }
  if (text.trim() === '') throw notAnObject('body must be a JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw notAnObject('body must be valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw notAnObject('body must be a JSON object');
  return parsed as Record<string, unknown>;
}
