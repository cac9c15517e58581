import Koa from 'koa';
import { Router } from '@koa/router';
import type { Services } from '../services.ts';
import { envelope } from './envelope.ts';
import { mountRoute } from './route.ts';
import { allRoutes } from './routes.ts';

/** The web role's Koa app, without `listen` (tests bind it to an ephemeral port). */
export function buildApp(svc: Services): Koa {
  const app = new Koa({ proxy: true });
  app.silent = true; // errors are logged by the envelope, with the request id
  const router = new Router();
  for (const route of allRoutes) mountRoute(router, route, svc);
  app.use(envelope(svc.logger));
  app.use(router.routes());
  return app;
}
