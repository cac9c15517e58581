import Koa, { type Middleware } from 'koa';
import { Router } from '@koa/router';
import type { Services } from '../services.ts';
import { envelope } from './envelope.ts';
import { mountRoute, routeMiddleware } from './route.ts';
import { RouteTable } from './dispatch.ts';
import { allRoutes } from './routes.ts';
import { requestObserver } from './observe.ts';
import { queueDashboard, QUEUES_PATH } from './queueDashboard.ts';

/**
 * Route families by path prefix. The listener reads (the hot path) are matched by a precompiled
 * table of their own (dispatch.ts); @koa/router serves the ~40 admin routes and the rest.
 */
const LISTENER_PREFIX = '/api/v1/stations/';

/** The web role's Koa app, without `listen` (tests bind it to an ephemeral port). */
export function buildApp(svc: Services): Koa {
  // ctx.ip (per-IP limits) is the X-Forwarded-For entry the trusted proxies appended, counted from the
  // right; what a client writes to the left of it is never read. 0 hops: the socket address.
  const hops = svc.config.trustedProxyHops;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  app.silent = true; // errors are logged by the envelope, with the request id
  const listener = new RouteTable();
  const admin = new Router();
  const other = new Router();
  for (const route of allRoutes) {
    if (route.path.startsWith(LISTENER_PREFIX)) listener.add(route.method, route.path, routeMiddleware(route, svc));
    else mountRoute(route.path.startsWith('/admin/') ? admin : other, route, svc);
  }
  const listenerRoutes = listener.middleware();
  const adminRoutes = admin.routes() as unknown as Middleware;
  const otherRoutes = other.routes() as unknown as Middleware;
  const queues = queueDashboard(svc);
  app.use(envelope(svc.logger, requestObserver(svc.config, svc.logger, svc.config.observability.metrics)));
  app.use((ctx, next) => {
    const path = ctx.path;
    if (path.startsWith(LISTENER_PREFIX)) return listenerRoutes(ctx, next);
    if (path.startsWith(QUEUES_PATH) && (path.length === QUEUES_PATH.length || path[QUEUES_PATH.length] === '/')) return queues(ctx, next);
    if (path.startsWith('/admin/')) return adminRoutes(ctx, next);
    return otherRoutes(ctx, next);
  });
  return app;
}
