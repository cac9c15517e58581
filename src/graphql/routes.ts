import { buildSchema, parse, validate, type DocumentNode, type GraphQLError, type GraphQLSchema, type ValidationRule } from 'graphql';
import { LRUCache } from 'lru-cache';
import { createHandler, type Request as GraphQLHttpRequest } from 'graphql-http';
import type { Context } from 'koa';
import { defineRoute } from '../http/route.ts';
import { readBodyText } from '../http/body.ts';
import { ErrorBody, StationSlugParams, Type } from '../http/schema.ts';
import type { Services } from '../services.ts';
import type { Station } from '../domains/stations/model.ts';
import type { Credential } from '../domains/auth/model.ts';
import { statusFor } from './errors.ts';
import { rootValue, type GraphQLContext } from './resolvers.ts';
import { readKey, Representation } from '../lib/readCache.ts';
import { typeDefs } from './sdl.ts';

export const schema = buildSchema(typeDefs);

const MAX_BODY_BYTES = 64 * 1024;

/**
 * A document is parsed and validated once per query text: apps send the same few queries on every
 * poll. Parsed documents are kept by text (LRU, bounded in count and size; very long texts are not kept), and
 * the validation errors by document (the schema and rules never change in a process).
 */
const MAX_CACHED_QUERY_LENGTH = 16 * 1024;
// Bounded in count and in an estimate of the parsed size (a document's AST is several times its text).
const documents = new LRUCache<string, DocumentNode>({ max: 1000, maxSize: 16 * 1024 * 1024, sizeCalculation: (_document, source) => 64 + source.length * 8 });
const validations = new WeakMap<DocumentNode, readonly GraphQLError[]>();

function parseOnce(source: string): DocumentNode {
  const hit = documents.get(source);
  if (hit) return hit;
  const document = parse(source);
  if (source.length <= MAX_CACHED_QUERY_LENGTH) documents.set(source, document);
  return document;
}

function validateOnce(target: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[]): readonly GraphQLError[] {
  const hit = validations.get(document);
  if (hit) return hit;
  const errors = validate(target, document, rules);
  validations.set(document, errors);
  return errors;
}

type Extra = { svc: Services; station: Station; credential: Credential; result: GraphQLContext };

/**
 * Root fields whose answers come only from the cached listener reads (graphql/reads.ts, resolvers.ts)
 * or the station itself. A document that asks for nothing else gets its whole response kept (below);
 * any other root field (the editorial preview mutation, which reads drafts) makes it uncached.
 */
const CACHED_FIELDS = new Set(['station', 'schemas', 'content', 'contentRecord', 'contentBySlug', 'schedule', 'programs', 'currentBroadcast', 'nowPlaying', 'trackHistory', 'weather', 'traffic']);

function trackedRoot(root: Record<string, unknown>): Record<string, unknown> {
  const tracked: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(root)) {
    tracked[name] =
      typeof field !== 'function' || CACHED_FIELDS.has(name)
        ? field
        : (args: unknown, ctx: GraphQLContext, info: unknown) => {
            ctx.answer = undefined;
            return (field as (a: unknown, c: GraphQLContext, i: unknown) => unknown)(args, ctx, info);
          };
  }
  return tracked;
}

const handler = createHandler<Context, Extra, GraphQLContext>({
  schema,
  rootValue: trackedRoot(rootValue),
  parse: parseOnce as typeof parse,
  validate: validateOnce as typeof validate,
  context: (req) => req.context.result,
  onOperation(req, _args, result) {
    const status = statusFor(result.errors);
    if (status !== null) req.context.result.status = status;
    if (result.errors?.length) req.context.result.answer = undefined;
  },
});

const JSON_RESPONSE = 'application/json; charset=utf-8';

/**
 * Runs one GraphQL over HTTP request (GET queries only, POST queries and mutations).
 *
 * A response built only from cached reads is kept as bytes in the read cache (lib/readCache.ts) under
 * the request's method, Accept and Content-Type headers and query string (GET) or body (POST), with the
 * areas its reads showed and the earliest instant one of them changes: the same request then skips
 * parsing, execution and serialisation until a write to one of those areas or that instant.
 */
async function serve(ctx: Context, svc: Services, station: Station, credential: Credential): Promise<void> {
  let text = '';
  let bodyError: unknown = null;
  if (ctx.method === 'POST') {
    try {
      text = await readBodyText(ctx.req, MAX_BODY_BYTES);
    } catch (err) {
      bodyError = err;
    }
  }
  const key = readKey(`graphql${ctx.method}`, station.id, `${ctx.get('accept')}\n${ctx.get('content-type')}`, ctx.method === 'POST' ? text : ctx.querystring);
  const nowMs = svc.clock.now().getTime();
  const hit = bodyError === null ? svc.reads.peek(key, nowMs) : undefined;
  if (hit !== undefined) {
    ctx.status = 200;
    ctx.set('Content-Type', hit.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = hit.bytes;
    return;
  }
  const generation = svc.reads.generation(station.id);
  const context: GraphQLContext = {
    svc,
    station,
    credential,
    previewGrant: ctx.get('x-preview-grant') || undefined,
    answer: { areas: new Set(), validUntil: Infinity },
  };
  const request: GraphQLHttpRequest<Context, Extra> = {
    method: ctx.method,
    url: ctx.url,
    headers: { get: (name: string) => ctx.get(name) || null },
    body: () => (ctx.method === 'POST' ? (bodyError === null ? Promise.resolve(text) : Promise.reject(bodyError)) : null),
    raw: ctx,
    context: { svc, station, credential, result: context },
  };
  const [body, init] = await handler(request);
  ctx.status = context.status ?? init.status;
  for (const [name, value] of Object.entries(init.headers ?? {})) ctx.set(name, value);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = body ?? '';
  const answer = context.answer;
  if (answer && ctx.status === 200 && typeof body === 'string' && body.length > 0) {
    const contentType = (init.headers as Record<string, string> | undefined)?.['content-type'] ?? JSON_RESPONSE;
    svc.reads.store(key, station.id, [...answer.areas], generation, new Representation(Buffer.from(body), contentType, answer.validUntil), nowMs);
  }
}

const GraphQLParams = Type.Object(
  {
    query: Type.Optional(Type.String({ description: 'the GraphQL document (queries only over GET)' })),
    variables: Type.Optional(Type.String({ description: 'JSON object, as a string' })),
    operationName: Type.Optional(Type.String()),
    extensions: Type.Optional(Type.String({ description: 'JSON object, as a string' })),
  },
  { additionalProperties: true },
);

const GraphQLBody = Type.Object({
  query: Type.String(),
  variables: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  operationName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  extensions: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
});

const GraphQLResult = Type.Object({ data: Type.Optional(Type.Unknown()), errors: Type.Optional(Type.Array(Type.Unknown())) });

const common = {
  path: '/api/v1/stations/{stationSlug}/graphql',
  tags: ['graphql'],
  surface: 'graphql' as const,
  scope: 'listener:read' as const,
  module: 'graphql' as const,
  rateLimit: 'graphql' as const,
  params: StationSlugParams,
  responses: {
    200: { description: '`{data, errors}`; check `errors` first.', schema: GraphQLResult },
    400: { description: 'Invalid request or VALIDATION_ERROR.', schema: GraphQLResult },
    401: { description: 'Missing or invalid credential (REST error body, before the query runs).', schema: ErrorBody },
    404: { description: 'Station unknown, inactive or offline (REST error body, before the query runs), or NOT_FOUND in errors.', schema: ErrorBody },
  },
};

export const graphqlRoutes = [
  defineRoute({
    ...common,
    method: 'get',
    operationId: 'graphqlGet',
    summary: 'GraphQL query over GET (queries only)',
    query: GraphQLParams,
    handler: ({ ctx, svc, station, credential }) => serve(ctx, svc, station, credential),
  }),
  defineRoute({
    ...common,
    method: 'post',
    operationId: 'graphqlPost',
    summary: 'GraphQL query or mutation over POST',
    body: GraphQLBody,
    bodyParser: 'none',
    handler: ({ ctx, svc, station, credential }) => serve(ctx, svc, station, credential),
  }),
];
