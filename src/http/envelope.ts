import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import { WavelineError, ValidationError, PayloadTooLargeError, UnsupportedMediaTypeError, NotFoundError, MethodNotAllowedError } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { RequestObserver } from './observe.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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
 * The outermost middleware of every route: request id, CORS (preflight answered here, before any
 * credential check), `Cache-Control: no-store` by default, and one place that turns every failure
 * into the contract's error body. A 500 never carries a stack or SQL.
 */
export function envelope(logger: Logger, observe: RequestObserver | null = null) {
  return async function envelopeMiddleware(ctx: Context, next: Next): Promise<void> {
    const startedAt = observe ? performance.now() : 0;
    const incoming = ctx.req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
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

    try {
      await next();
      if (ctx.status === 404 && ctx.body == null && ctx.respond !== false) throw noRoute(ctx);
    } catch (raw) {
      const err = normalise(raw);
      if (!(err instanceof WavelineError)) {
        logger.error({ err: raw, requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
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
 * No route answered. Under the encoder integrations the error keeps their legacy `{error: string}`
 * shape, and the ingest path with another method than POST is 405 with `Allow: POST`.
 */
function noRoute(ctx: Context): Error {
  if (!ctx.path.startsWith(INTEGRATIONS_PREFIX)) return new NotFoundError('No such route.');
  ctx.state.errorShape = 'legacy' satisfies ErrorShape;
  return ctx.path === INGEST_PATH ? new MethodNotAllowedError('POST') : new NotFoundError('No such route.');
}

const INTEGRATIONS_PREFIX = '/api/v1/integrations/';
const INGEST_PATH = '/api/v1/integrations/playback';

/** Errors thrown by koa-body, raw-body and friends carry an HTTP status; give them our codes. */
function normalise(raw: unknown): unknown {
  if (raw instanceof WavelineError) return raw;
  const status = (raw as { status?: number; statusCode?: number })?.status ?? (raw as { statusCode?: number })?.statusCode;
  const type = (raw as { type?: string })?.type;
  if (status === 413 || type === 'entity.too.large') return new PayloadTooLargeError('Request body is too large.');
  if (status === 415) return new UnsupportedMediaTypeError('Unsupported content type.');
  if (status === 400 || raw instanceof SyntaxError) {
    return new ValidationError('Request body is not valid JSON.', [{ path: 'body', code: 'invalid_json', message: 'body must be valid JSON' }]);
  }
  return raw;
}

export function writeError(ctx: Context, err: unknown, requestId: string): void {
  const known = err instanceof WavelineError ? err : null;
  const status = known?.status ?? 500;
  const code = known?.code ?? 'INTERNAL_ERROR';
  const message = known?.message ?? 'Internal server error.';
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.remove('ETag');
  if (known && 'retryAfterSeconds' in known) ctx.set('Retry-After', String(known.retryAfterSeconds));
  if (known instanceof MethodNotAllowedError) ctx.set('Allow', known.allow);
  if ((ctx.state.errorShape as ErrorShape | undefined) === 'legacy') {
    ctx.body = { error: known?.issues?.[0]?.message ?? message };
    return;
  }
  ctx.body = { error: { code, message, requestId, ...(known?.issues ? { issues: known.issues } : {}) } };
}
