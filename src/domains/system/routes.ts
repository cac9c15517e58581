import { readFileSync } from 'node:fs';
import { defineRoute, type RouteSpec } from '../../http/route.ts';
import { Type } from '../../http/schema.ts';
import { buildOpenApi } from '../../http/openapi.ts';
import { ProviderUnavailableError } from '../../lib/errors.ts';
import { referenceRoutes } from './reference.ts';

/** The API version in /openapi.json is the package's. */
export const API_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Liveness, readiness, the OpenAPI document and its reference page. `routes` is the full table, this one included. */
export function systemRoutes(routes: () => RouteSpec[]): RouteSpec[] {
  let openapi: Buffer | null = null;
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'Liveness: the process answers',
      tags: ['system'],
      surface: 'system',
      responses: { 200: { description: 'Alive.', schema: Type.Object({ ok: Type.Boolean() }) } },
      handler: () => ({ ok: true }),
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'Readiness: Postgres and Redis answer',
      tags: ['system'],
      surface: 'system',
      responses: {
        200: { description: 'Ready.', schema: Type.Object({ ok: Type.Boolean(), postgres: Type.Boolean(), redis: Type.Boolean() }) },
        503: { description: 'A dependency does not answer.' },
      },
      async handler({ svc }) {
        const timeout = <T>(p: Promise<T>) => Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref())]);
        const [postgres, redis] = await Promise.all([
          timeout(svc.db.raw('select 1')).then(() => true, () => false),
          timeout(svc.redis.ping()).then(() => true, () => false),
        ]);
        if (!postgres || !redis) throw new ProviderUnavailableError(`Not ready: ${!postgres ? 'postgres ' : ''}${!redis ? 'redis' : ''}`.trim());
        return { ok: true, postgres, redis };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      summary: 'This document (OpenAPI 3.1)',
      tags: ['system'],
      surface: 'system',
      responses: { 200: { description: 'The OpenAPI 3.1 document.', schema: Type.Object({}, { additionalProperties: true }) } },
      handler({ ctx, svc }) {
        openapi ??= Buffer.from(JSON.stringify(buildOpenApi(routes(), { version: API_VERSION, serverUrl: svc.config.publicBaseUrl })));
        ctx.set('Cache-Control', 'public, max-age=60');
        ctx.type = 'application/json';
        ctx.body = openapi;
      },
    }),
    ...referenceRoutes,
  ];
}
