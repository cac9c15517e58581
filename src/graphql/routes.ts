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
import { typeDefs } from './sdl.ts';

export const schema = buildSchema(typeDefs);

const MAX_BODY_BYTES = 64 * 1024;

/**
 * A document is parsed and validated once per query text: apps send the same few queries on every
 * poll. Parsed documents are kept by text (LRU, bounded in count; very long texts are not kept), and
 * the validation errors by document (the schema and rules never change in a process).
 */
const MAX_CACHED_QUERY_LENGTH = 16 * 1024;
const documents = new LRUCache<string, DocumentNode>({ max: 1000 });
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

const handler = createHandler<Context, Extra, GraphQLContext>({
  schema,
  rootValue,
  parse: parseOnce as typeof parse,
  validate: validateOnce as typeof validate,
  context: (req) => req.context.result,
  onOperation(req, _args, result) {
    const status = statusFor(result.errors);
    if (status !== null) req.context.result.status = status;
  },
});

/** Runs one GraphQL over HTTP request (GET queries only, POST queries and mutations). */
async function serve(ctx: Context, svc: Services, station: Station, credential: Credential): Promise<void> {
  const context: GraphQLContext = { svc, station, credential, previewGrant: ctx.get('x-preview-grant') || undefined };
  const request: GraphQLHttpRequest<Context, Extra> = {
    method: ctx.method,
    url: ctx.url,
    headers: { get: (name: string) => ctx.get(name) || null },
    body: () => (ctx.method === 'POST' ? readBodyText(ctx.req, MAX_BODY_BYTES) : null),
    raw: ctx,
    context: { svc, station, credential, result: context },
  };
  const [body, init] = await handler(request);
  ctx.status = context.status ?? init.status;
  for (const [name, value] of Object.entries(init.headers ?? {})) ctx.set(name, value);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = body ?? '';
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
