import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { Context } from 'koa';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../lib/errors.ts';
import { unstorableIssue, unstorableTextAt } from './hostile.ts';

/**
 * Reads a request body as UTF-8 text, refusing it (413) as soon as more than `limit` bytes arrive,
 * before buffering the rest. A Content-Length over the limit is refused without reading at all.
 */
export async function readBodyText(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new PayloadTooLargeError(`Request body is larger than ${limit} bytes.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw new PayloadTooLargeError(`Request body is larger than ${limit} bytes.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
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

const notJson = (message: string) => new ValidationError('Request body is not valid JSON.', [{ path: 'body', code: 'invalid_json', message }]);

/**
 * A JSON request body (any JSON value), or undefined when the request does not declare a JSON body
 * (the route then validates `{}`). 413 past `limit` bytes (after gzip/deflate), 415 for another
 * Content-Encoding, 400 for bytes that are not UTF-8 or not JSON, and 400 for text no column can hold
 * (NUL, unpaired surrogates) anywhere in it — Postgres would refuse it with an error.
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  if (!ctx.request.is(JSON_TYPES)) return undefined;
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
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        ctx.set('Connection', 'close');
        throw new PayloadTooLargeError('Request body is too large.');
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof PayloadTooLargeError) throw err;
    throw notJson('body could not be decompressed');
  }
  let text: string;
  try {
    text = utf8.decode(Buffer.concat(chunks, size));
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
  const unstorable = unstorableTextAt(parsed);
  if (unstorable) throw new ValidationError('Invalid request body.', [unstorableIssue(unstorable)]);
  return parsed;
}
