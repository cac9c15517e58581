import Koa, { type Middleware } from 'koa';
import { Router } from '@koa/router';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { cachedReads } from './cachedReads.ts';
import { storedAnswers } from './storedAnswers.ts';
import type { RouteServices as Services } from './subjects.ts';
import { answerClientError, envelope, type ErrorShape, type Unrouted } from './envelope.ts';
import { mountRoute, routeMiddleware } from './route.ts';
import type { RouteSpec } from './routeSpec.ts';
import { RouteTable } from './dispatch.ts';
import { requestObserver } from './observe.ts';
import { queueDashboard, QUEUES_PATH } from './queueDashboard.ts';

/**
 * Route families by path prefix. The listener reads (the hot path) are matched by a precompiled
 * table of their own (dispatch.ts); @koa/router serves the ~40 admin routes and the rest.
 */
const LISTENER_PREFIX = '/api/v1/stations/';

/** The web role's Koa app (without `listen`: tests bind it to an ephemeral port) and its answer to unreadable requests. */
export interface WebApp {
  koa: Koa;
  /** The server's request listener: listener reads already in the read cache (cachedReads.ts), else Koa. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** For the server's `clientError`: a request Node's parser refused, answered in its path's error shape. */
  onClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void;
}

/** Serves `routes` (the composition's table, src/routes.ts) with `svc`. */
export function buildApp(svc: Services, routes: readonly RouteSpec[]): WebApp {
  // ctx.ip (per-IP limits) is the X-Forwarded-For entry the trusted proxies appended, counted from the
  // right; what a client writes to the left of it is never read. 0 hops: the socket address.
  const hops = svc.config.trustedProxyHops;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  app.silent = true; // errors are logged by the envelope, with the request id
  const listener = new RouteTable();
  const admin = new Router();
  const other = new Router();
  for (const route of routes) {
    if (route.path.startsWith(LISTENER_PREFIX)) listener.add(route.method, route.path, routeMiddleware(route, svc));
    else mountRoute(route.path.startsWith('/admin/') ? admin : other, route, svc);
  }
  const listenerRoutes = listener.middleware();
  const adminRoutes = admin.routes() as unknown as Middleware;
  const otherRoutes = other.routes() as unknown as Middleware;
  const queues = queueDashboard(svc);
  const unrouted = unroutedAnswers(routes);
  const observe = requestObserver(svc.config, svc.logger, svc.config.observability.metrics);
  app.use(envelope(svc.logger, observe, unrouted));
  app.use((ctx, next) => {
    const path = ctx.path;
    if (path.startsWith(LISTENER_PREFIX)) return listenerRoutes(ctx, next);
    if (path.startsWith(QUEUES_PATH) && (path.length === QUEUES_PATH.length || path[QUEUES_PATH.length] === '/')) return queues(ctx, next);
    if (path.startsWith('/admin/')) return adminRoutes(ctx, next);
    return otherRoutes(ctx, next);
  });
  const koa = app.callback();
  const cached = cachedReads(svc, routes, observe, (req, res) => void koa(req, res));
  const stored = storedAnswers(svc, routes, observe);
  return {
    koa: app,
    handle: (req, res) => {
      if (!cached(req, res) && !stored(req, res)) void koa(req, res);
    },
    onClientError: (err, socket) => answerClientError(err, socket, unrouted),
  };
}

const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * What a request no route took is answered with, from what the routes declare: under the parent path of
 * a route with the legacy error shape (ingest's `/api/v1/integrations/`), errors keep that shape; a path
 * whose routes set `methodNotAllowed` answers another method with 405 and `Allow` naming theirs; under
 * the path of a route with its own `cacheControl` (up to its first parameter), errors carry that.
 */
export function unroutedAnswers(routes: readonly RouteSpec[]): Unrouted {
  const legacyFamilies = [
    ...new Set(routes.filter((r) => r.errorShape === 'legacy').map((r) => r.path.slice(0, r.path.lastIndexOf('/') + 1))),
  ];
  const methods = new Map<string, Set<string>>();
  for (const route of routes) {
    if (!route.methodNotAllowed) continue;
    const set = methods.get(route.path) ?? new Set<string>();
    set.add(route.method);
    methods.set(route.path, set);
  }
  const allows = [...methods].map(([path, set]) => ({
    pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    allow: METHOD_ORDER.filter((m) => set.has(m))
      .map((m) => m.toUpperCase())
      .join(', '),
  }));
  const cacheControls = routes
    .filter((r) => r.cacheControl !== undefined)
    .map((r) => ({ family: r.path.slice(0, r.path.indexOf('{') < 0 ? r.path.length : r.path.indexOf('{')), value: r.cacheControl! }));
  return {
    shape: (path): ErrorShape => (legacyFamilies.some((family) => path.startsWith(family)) ? 'legacy' : 'listener'),
    allow: (path) => allows.find((entry) => entry.pattern.test(path))?.allow ?? null,
    cacheControl: (path) => cacheControls.find((entry) => path.startsWith(entry.family))?.value ?? 'no-store',
  };
}
