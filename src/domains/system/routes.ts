import { readFileSync } from 'node:fs';
import { defineRoute, type RouteSpec } from '../../http/route.ts';
import { Type } from '../../http/schema.ts';
import { buildOpenApi } from '../../http/openapi.ts';
import { referenceRoutes } from './reference.ts';
import { NotFoundError, ProviderUnavailableError, UnauthenticatedError } from '../../lib/errors.ts';
import { dependenciesAnswer } from '../../lib/readiness.ts';
import { metricsAnswer } from '../../lib/metrics.ts';

/** The API version in /openapi.json is the package's. */
export const API_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

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
      description:
        'With read replicas (DATABASE_REPLICA_URLS), `replicas` lists each by `host:port` with its reachability and lag at its last probe; a replica down or lagging never makes the process unready (listener reads then use the primary: docs/operations.md#postgres-read-replicas).',
      tags: ['system'],
      surface: 'system',
      responses: {
        200: {
          description: 'Ready.',
          schema: Type.Object({
            ok: Type.Boolean(),
            postgres: Type.Boolean(),
            redis: Type.Boolean(),
            replicas: Type.Optional(
              Type.Array(
                Type.Object({
                  name: Type.String({ description: 'host:port (never the URL: it may hold a password)' }),
                  reachable: Type.Boolean({ description: 'answered its last probe as a replica in recovery' }),
                  lagSeconds: Type.Union([Type.Number(), Type.Null()], {
                    description: 'seconds its replay is behind; null while unreachable',
                  }),
                  replayLsn: Type.Union([Type.String(), Type.Null()], { description: 'its replay position (pg_last_wal_replay_lsn)' }),
                  used: Type.Boolean({ description: 'listener reads go to it: reachable and within DATABASE_REPLICA_MAX_LAG_SECONDS' }),
                }),
              ),
            ),
          }),
        },
        503: { description: 'A dependency does not answer.' },
      },
      async handler({ svc }) {
        const { postgres, redis } = await dependenciesAnswer(svc);
        if (!postgres || !redis)
          throw new ProviderUnavailableError(`Not ready: ${!postgres ? 'postgres ' : ''}${!redis ? 'redis' : ''}`.trim());
        return svc.replicas === null ? { ok: true, postgres, redis } : { ok: true, postgres, redis, replicas: svc.replicas.status() };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics of this process (docs/operations.md)',
      description:
        'Prometheus text format. With METRICS_TOKEN set, only `Authorization: Bearer <METRICS_TOKEN>` is served; METRICS=0 switches it off (404).',
      tags: ['system'],
      surface: 'system',
      responses: {
        200: { description: 'Prometheus text exposition format 0.0.4.', schema: Type.String(), contentType: 'text/plain; version=0.0.4' },
        401: { description: 'METRICS_TOKEN is set and the request does not carry it.' },
        404: { description: 'Metrics are switched off (METRICS=0).' },
      },
      async handler({ ctx, svc }) {
        const answer = await metricsAnswer(ctx.get('authorization') || undefined, svc.config.observability);
        if (answer.status === 404) throw new NotFoundError('Metrics are switched off (METRICS=0).');
        if (answer.status === 401) {
          ctx.set('WWW-Authenticate', 'Bearer');
          throw new UnauthenticatedError('A valid metrics token is needed.');
        }
        ctx.type = answer.contentType;
        ctx.body = answer.body;
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
