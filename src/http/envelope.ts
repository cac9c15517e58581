import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type { Context, Next } from 'koa';
import {
  WavelineError,
  ValidationError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  NotFoundError,
  MethodNotAllowedError,
  DatabaseUnavailableError,
  isRedisUnavailable,
  RedisUnavailableError,
  isDatabaseUnreachable,
  isDataException,
} from '../lib/errors.ts';
import { headerIssue, targetIssue } from './hostile.ts';
import type { Logger } from '../lib/logger.ts';
import { requestIdFrom } from '../lib/ids.ts';
import type { RequestObserver } from './observe.ts';

/** The client's `X-Request-Id` when it is a sane token, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return requestIdFrom(typeof incoming === 'string' ? incoming : undefined);
}

export const CORS_ALLOW_HEADERS = [
  'Authorization',
  'Content-Type',
  'If-None-Match',
  'If-Range',
  'Range',
  'X-Preview-Grant',
  'X-Request-Id',
].join(', ');

export const CORS_EXPOSE_HEADERS = [
  'ETag',
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Content-Range',
  'Accept-Ranges',
  'Content-Length',
].join(', ');

/** How a route reports errors: the listener body, or ingest's legacy `{error: string}`. */
export type ErrorShape = 'listener' | 'legacy';

/**
 * What the envelope answers for a request no route took, learnt from the route table (app.ts): the error
 * shape of the path's family, and `Allow` for a path whose routes answer another method with 405.
 */
export interface Unrouted {
  shape(path: string): ErrorShape;
  /** The path's methods for a 405, or null for a 404. */
  allow(path: string): string | null;
  /** `Cache-Control` of the path's errors: `no-store`, or what its routes declare (`RouteSpec.cacheControl`). */
  cacheControl(path: string): string;
}

const NOTHING_ROUTED: Unrouted = { shape: () => 'listener', allow: () => null, cacheControl: () => 'no-store' };

/**
 * The outermost middleware of every route: request id, CORS (preflight answered here, before any
 * credential check), `Cache-Control: no-store` by default, and one place that turns every failure
 * into the error body of docs/errors.md#error-codes. A 500 never carries a stack or SQL.
 */
export function envelope(logger: Logger, observe: RequestObserver | null = null, unrouted: Unrouted = NOTHING_ROUTED) {
  return async function envelopeMiddleware(ctx: Context, next: Next): Promise<void> {
    const startedAt = observe ? performance.now() : 0;
    const requestId = requestIdOf(ctx.req);
    ctx.state.requestId = requestId;

    if (ctx.method === 'OPTIONS') {
      const res = ctx.res;
      envelopeHeaders(res, requestId);
      res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', ctx.get('access-control-request-headers') || CORS_ALLOW_HEADERS);
      res.setHeader('Access-Control-Max-Age', '600');
      ctx.status = 204;
      if (observe) res.once('close', () => observe(ctx, requestId, startedAt));
      return;
    }

    const cacheControl = unrouted.cacheControl(ctx.path);
    if (cacheControl !== 'no-store') ctx.state.cacheControl = cacheControl;
    try {
      const badTarget = targetIssue(ctx.req.url ?? '');
      const badHeader = badTarget ? null : headerIssue(ctx.req.rawHeaders);
      if (badTarget || badHeader) {
        if (unrouted.shape(ctx.path) === 'legacy') ctx.state.errorShape = 'legacy' satisfies ErrorShape;
        throw badTarget
          ? new ValidationError('Invalid request URL.', [badTarget])
          : new ValidationError('Invalid request header.', [badHeader!]);
      }
      await next();
      if (ctx.status === 404 && ctx.body == null && ctx.respond !== false) throw noRoute(ctx, unrouted);
    } catch (raw) {
      const err = normalise(raw);
      if (!(err instanceof WavelineError)) {
        logger.error({ err: raw, requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
      } else if (err !== raw) {
        logger.warn(
          { err: raw, requestId, method: ctx.method, path: ctx.path, code: err.code },
          'request failed on an infrastructure or data error',
        );
      }
      writeError(ctx, err, requestId);
    }
    // Responses a route wrote itself (sendCacheable) carry these headers already, in one writeHead.
    if (!ctx.res.headersSent) envelopeHeaders(ctx.res, requestId);
    if (observe) {
      // A listener read has written and ended its response (sendCacheable); Koa writes the others next.
      if (ctx.respond === false) observe(ctx, requestId, startedAt);
      else ctx.res.once('close', () => observe(ctx, requestId, startedAt));
    }
  };
}

/**
 * The headers every response carries. They are set after the route ran (Koa writes the response
 * after the middleware chain), so a listener read that writes its own response passes them to one
 * `writeHead` instead (see etag.ts) and no header is set twice. A route's own Cache-Control stays.
 */
function envelopeHeaders(res: ServerResponse, requestId: string): void {
  res.setHeader('X-Request-Id', requestId);
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
  if (!res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', 'no-store');
}

/**
 * No route answered: 405 with `Allow` on a path whose routes say so (ingest: `Allow: POST`; GraphQL:
 * `Allow: GET, POST`), else 404 — in the error shape of the path's family (ingest's `{error: string}`
 * under the integrations path).
 */
function noRoute(ctx: Context, unrouted: Unrouted): Error {
  if (unrouted.shape(ctx.path) === 'legacy') ctx.state.errorShape = 'legacy' satisfies ErrorShape;
  const allow = unrouted.allow(ctx.path);
  return allow ? new MethodNotAllowedError(allow) : new NotFoundError('No such route.');
}

/**
 * Errors thrown by body readers carry an HTTP status; give them our codes. Postgres unreachable is 503
 * with Retry-After (never 500), as is Redis (or a cluster slot's master) unable to take a command; a value Postgres refuses as data (SQLSTATE class 22) is 400.
 */
function normalise(raw: unknown): unknown {
  if (raw instanceof WavelineError) return raw;
  if (isDatabaseUnreachable(raw)) return new DatabaseUnavailableError();
  // A Redis Cluster slot without a master (or Redis gone) while a write needs it: 503, never 500.
  if (isRedisUnavailable(raw)) return new RedisUnavailableError();
  if (isDataException(raw))
    return new ValidationError('A value in the request cannot be stored.', [
      { path: '', code: 'invalid_value', message: 'a value in the request cannot be stored' },
    ]);
  const status = (raw as { status?: number; statusCode?: number })?.status ?? (raw as { statusCode?: number })?.statusCode;
  const type = (raw as { type?: string })?.type;
  if (status === 413 || type === 'entity.too.large') return new PayloadTooLargeError('Request body is too large.');
  if (status === 415) return new UnsupportedMediaTypeError('Unsupported content type.');
  if (status === 400 || raw instanceof SyntaxError) {
    return new ValidationError('Request body is not valid JSON.', [
      { path: 'body', code: 'invalid_json', message: 'body must be valid JSON' },
    ]);
  }
  return raw;
}

/** The error body of docs/errors.md#error-codes, `{error: {code, message, requestId, issues?}}` (a 500 for anything not ours). */
function listenerErrorBody(
  err: unknown,
  requestId: string,
): { status: number; known: WavelineError | null; body: { error: Record<string, unknown> } } {
  const known = err instanceof WavelineError ? err : null;
  const code = known?.code ?? 'INTERNAL_ERROR';
  const message = known?.message ?? 'Internal server error.';
  return {
    status: known?.status ?? 500,
    known,
    body: { error: { code, message, requestId, ...known?.details, ...(known?.issues ? { issues: known.issues } : {}) } },
  };
}

export function writeError(ctx: Context, err: unknown, requestId: string): void {
  const { known, status, body } = listenerErrorBody(err, requestId);
  ctx.status = status;
  ctx.set('Cache-Control', (ctx.state.cacheControl as string | undefined) ?? 'no-store');
  ctx.remove('ETag');
  if (known && 'retryAfterSeconds' in known) ctx.set('Retry-After', String(known.retryAfterSeconds));
  if (known instanceof MethodNotAllowedError) ctx.set('Allow', known.allow);
  if ((ctx.state.errorShape as ErrorShape | undefined) === 'legacy') {
    ctx.body = { error: known?.issues?.[0]?.message ?? body.error.message };
    return;
  }
  ctx.body = body;
}

/**
 * Node's HTTP parser refuses a request it cannot read (NUL or other bytes HTTP forbids in a header, a
 * malformed request line, headers too large) before Koa sees it. Its own answer is a bare 400 without a
 * body; this one is the error body of docs/errors.md#error-codes (ingest's `{error: string}` under the
 * integrations path) with an `X-Request-Id`, and the connection is closed.
 */
export function answerClientError(
  err: Error & { code?: string; rawPacket?: Buffer },
  socket: Duplex,
  unrouted: Unrouted = NOTHING_ROUTED,
): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'Request headers are too large.'
      : 'Malformed HTTP request: the request line or a header holds bytes HTTP does not allow (NUL, control characters).';
  const target = /^[A-Z]+ (\/[^\s?#]*)/.exec(err.rawPacket?.subarray(0, 256).toString('latin1') ?? '');
  const legacy = target !== null && unrouted.shape(target[1]) === 'legacy';
  const body = JSON.stringify(legacy ? { error: message } : { error: { code: 'VALIDATION_ERROR', message, requestId } });
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nAccess-Control-Allow-Origin: *\r\nAccess-Control-Expose-Headers: ${CORS_EXPOSE_HEADERS}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * `writeError` for a listener read answered without Koa (cachedReads.ts, a refused rate limit): the same
 * status, headers and body as the envelope writes for it.
 */
export function writeErrorResponse(res: ServerResponse, err: unknown, requestId: string): void {
  const { known, status, body: error } = listenerErrorBody(err, requestId);
  const body = JSON.stringify(error);
  res.statusCode = status;
  res.removeHeader('ETag');
  res.setHeader('Cache-Control', 'no-store');
  if (known && 'retryAfterSeconds' in known) res.setHeader('Retry-After', String(known.retryAfterSeconds));
  envelopeHeaders(res, requestId);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
