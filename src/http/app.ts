import Koa, { type Middleware } from 'koa';
import { Router } from '@koa/router';
import type { Services } from '../services.ts';
import { envelope } from './envelope.ts';
import { mountRoute } from './route.ts';
import { allRoutes } from './routes.ts';

/**
 * Route families by path prefix. @koa/router tests every route of a router against each request, so
 * the listener reads (the hot path) get a router of their own instead of sharing one with the ~40
 * admin routes. The last family takes everything else.
 */
const FAMILIES = ['/api/v1/stations/', '/admin/', ''] as const;

/** The web role's Koa app, without `listen` (tests bind it to an ephemeral port). */
export function buildApp(svc: Services): Koa {
  const app = new Koa({ proxy: true });
  app.silent = true; // errors are logged by the envelope, with the request id
  const routers = FAMILIES.map(() => new Router());
  for (const route of allRoutes) {
    const family = FAMILIES.findIndex((prefix) => route.path.startsWith(prefix));
    mountRoute(routers[family], route, svc);
  }
  const dispatch: Array<[string, Middleware]> = FAMILIES.map((prefix, i) => [prefix, routers[i].routes() as unknown as Middleware]);
  app.use(envelope(svc.logger));
  app.use((ctx, next) => {
    const path = ctx.path;
    for (const [prefix, routes] of dispatch) if (path.startsWith(prefix)) return routes(ctx, next);
    return next();
  });
  return app;
}
