import type { TSchema } from '@sinclair/typebox';
import type { ResponseSpec, RouteSpec } from './route.ts';
import { ErrorBody } from './schema.ts';

// /openapi.json is generated from the same per-route schemas that validate input, so it cannot drift.

function strip(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' ? undefined : value)));
}

function parameters(route: RouteSpec): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [['path', route.params], ['query', route.query]] as const) {
    if (!schema) continue;
    const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
    const required = new Set((schema as { required?: string[] }).required ?? []);
    for (const [name, prop] of Object.entries(props)) {
      const isArray = (prop as { type?: string }).type === 'array';
      out.push({
        name,
        in: where,
        required: where === 'path' ? true : required.has(name),
        ...(prop.description ? { description: prop.description } : {}),
        schema: strip(prop),
        ...(isArray ? { style: 'form', explode: true } : {}),
      });
    }
  }
  return out;
}

const SECURITY: Record<string, unknown[]> = {
  listener: [{ bearer: [] }],
  push: [{ bearer: [] }],
  graphql: [{ bearer: [] }],
  ingest: [{ bearer: [] }],
  admin: [{ operator: [] }],
  media: [],
  system: [],
};

/**
 * Answers every route can give besides its own (docs/errors.md): a URL or body no route accepts
 * ("Hostile input"), and Postgres unreachable. The ingest route says them in its own shape.
 */
const EVERY_ROUTE: Record<string, ResponseSpec> = {
  400: { description: 'VALIDATION_ERROR: also a URL with NUL, invalid UTF-8 or a stray %, or a JSON body with NUL or unpaired surrogates.', schema: ErrorBody },
  503: { description: 'PROVIDER_UNAVAILABLE: Postgres is unreachable; retry after `Retry-After` seconds.', schema: ErrorBody },
};

export function buildOpenApi(routes: RouteSpec[], info: { version: string; serverUrl: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    const stated = route.surface === 'system' || route.surface === 'ingest' ? route.responses : { ...route.responses, ...Object.fromEntries(Object.entries(EVERY_ROUTE).filter(([status]) => !route.responses[status])) };
    for (const [status, spec] of Object.entries(stated)) {
      responses[status] = {
        description: spec.description,
        ...(spec.schema || spec.contentType
          ? { content: { [spec.contentType ?? 'application/json']: { schema: spec.schema ? strip(spec.schema) : { type: 'string', format: 'binary' } } } }
          : {}),
      };
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      security: SECURITY[route.surface],
      parameters: parameters(route),
      responses,
    };
    if (route.scope) operation['x-waveline-scope'] = route.scope;
    if (route.module) operation['x-waveline-module'] = route.module;
    if (route.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: strip(route.body) } } };
    } else if (route.rawBody) {
      operation.requestBody = { required: true, content: { [route.rawBody]: { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } };
    }
    paths[route.path] ??= {};
    paths[route.path][route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Waveline Station Delivery API',
      version: info.version,
      description: 'Listener reads, push registration, now-playing ingest and the operator admin API of Waveline.',
    },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Station credential (wvl_…) with the scope the operation names.' },
        operator: { type: 'http', scheme: 'bearer', description: 'WAVELINE_ADMIN_TOKEN.' },
      },
    },
  };
}
