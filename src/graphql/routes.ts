import { buildSchema } from 'graphql';
import { createHandler, type Request as GraphQLHttpRequest } from 'graphql-http';
import type { Context } from 'koa';
import { defineRoute } from '../http/route.ts';
import { readJsonBody } from '../http/body.ts';
import { unstorableIssue, unstorableTextAt } from '../http/hostile.ts';
import { ErrorBody, StationSlugParams, Type } from '../http/schema.ts';
import { validate } from '../http/validate.ts';
import { MethodNotAllowedError, NotAcceptableError, UnsupportedMediaTypeError, ValidationError } from '../lib/errors.ts';
import { limitRules } from './limits.ts';
import type { Services } from '../services.ts';
import type { Station } from '../domains/stations/model.ts';
import type { Credential } from '../domains/auth/model.ts';
import { statusFor } from './errors.ts';
import { rootValue, type GraphQLContext } from './resolvers.ts';
import { typeDefs } from './sdl.ts';
import { graphiqlAssetRoutes, graphiqlPage } from './graphiql.ts';

export const schema = buildSchema(typeDefs);

const MAX_BODY_BYTES = 64 * 1024;

type Extra = { svc: Services; station: Station; credential: Credential; result: GraphQLContext };

const handler = createHandler<Context, Extra, GraphQLContext>({
  schema,
  rootValue,
  context: (req) => req.context.result,
  // Depth, alias and cost limits refuse an operation before any resolver runs (limits.ts).
  validationRules: (req, _args, specified) => [...specified, ...limitRules(req.context.svc.config.graphql, () => (req.context.result.status = 400))],
  onOperation(req, _args, result) {
    const status = statusFor(result.errors);
    if (status !== null) req.context.result.status = status;
  },
});

// What graphql-http would answer with a bare status and a text body: checked here first, so every
// answer before the query runs is the contract's error body (docs/graphql.md).
const ACCEPTED = /^(application\/graphql-response\+json|application\/json|application\/\*|\*\/\*)(;|$)/;

function checkAccept(accept: string): void {
  if (!accept) return;
  const ranges = accept.replace(/\s/g, '').toLowerCase().split(',');
  if (ranges.some((range) => ACCEPTED.test(range) && !/;charset=(?!utf-?8(;|$))/.test(range))) return;
  throw new NotAcceptableError('GraphQL answers application/graphql-response+json or application/json (UTF-8); the Accept header allows neither.');
}

/** A POST body: a JSON object `{query, variables?, operationName?, extensions?}` in UTF-8. */
async function readOperation(ctx: Context): Promise<Record<string, unknown>> {
  const [mediaType, ...parameters] = ctx.get('content-type').replace(/\s/g, '').toLowerCase().split(';');
  const charset = parameters.find((p) => p.startsWith('charset='));
  if (mediaType !== 'application/json' || (charset && charset !== 'charset=utf-8')) throw new UnsupportedMediaTypeError('Content-Type must be application/json (UTF-8).');
  const body = await readJsonBody(ctx, MAX_BODY_BYTES);
  if (body === undefined) throw new ValidationError('Invalid request body.', [{ path: 'query', code: 'required', message: 'query is required' }]);
  return validate<Record<string, unknown>>(GraphQLBody, 'body', body);
}

/** A GET's parameters: `query` is required, `variables` and `extensions` are JSON objects as strings. */
function checkQueryParameters(query: Record<string, unknown>): void {
  if (typeof query.query !== 'string') throw new ValidationError('Invalid query parameters.', [{ path: 'query', code: 'required', message: 'query is required' }]);
  for (const name of ['variables', 'extensions']) {
    const text = query[name];
    if (typeof text !== 'string' || text === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ValidationError('Invalid query parameters.', [{ path: name, code: 'invalid_format', message: `${name} must be a JSON object` }]);
    const unstorable = unstorableTextAt(parsed, name);
    if (unstorable) throw new ValidationError('Invalid query parameters.', [unstorableIssue(unstorable)]);
  }
}

/** Runs one GraphQL over HTTP request (GET queries only, POST queries and mutations). */
async function serve(ctx: Context, svc: Services, station: Station, credential: Credential, query?: Record<string, unknown>): Promise<void> {
  checkAccept(ctx.get('accept'));
  let operation: Record<string, unknown> | null = null;
  if (ctx.method === 'POST') operation = await readOperation(ctx);
  else checkQueryParameters(query ?? {});
  const context: GraphQLContext = { svc, station, credential, previewGrant: ctx.get('x-preview-grant') || undefined };
  const request: GraphQLHttpRequest<Context, Extra> = {
    method: ctx.method,
    url: ctx.url,
    headers: { get: (name: string) => ctx.get(name) || null },
    body: operation,
    raw: ctx,
    context: { svc, station, credential, result: context },
  };
  const [body, init] = await handler(request);
  // A mutation over GET: graphql-http's 405, in the contract's shape.
  if (init.status === 405) throw new MethodNotAllowedError('POST');
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
    400: { description: 'VALIDATION_ERROR in `errors` (an argument, or the depth, alias or cost limit), or before the query runs a REST error body: malformed JSON, missing `query`, `variables` not an object, text with NUL.', schema: GraphQLResult },
    401: { description: 'Missing or invalid credential (REST error body, before the query runs).', schema: ErrorBody },
    404: { description: 'Station unknown, inactive or offline (REST error body, before the query runs), or NOT_FOUND in errors.', schema: ErrorBody },
    405: { description: 'A mutation over GET (METHOD_NOT_ALLOWED, `Allow: POST`; REST error body).', schema: ErrorBody },
    406: { description: 'An `Accept` header that allows neither application/graphql-response+json nor application/json (NOT_ACCEPTABLE; REST error body).', schema: ErrorBody },
    413: { description: 'A POST body over 64 KiB (PAYLOAD_TOO_LARGE; REST error body).', schema: ErrorBody },
    415: { description: 'A POST that is not application/json in UTF-8 (UNSUPPORTED_MEDIA_TYPE; REST error body).', schema: ErrorBody },
  },
};

export const graphqlRoutes = [
  defineRoute({
    ...common,
    method: 'get',
    operationId: 'graphqlGet',
    summary: 'GraphQL query over GET (queries only)',
    description: 'GraphQL over HTTP (graphql-http). A browser that asks for text/html (and not JSON) gets GraphiQL instead, with a field for the credential.',
    query: GraphQLParams,
    page: graphiqlPage,
    handler: ({ ctx, svc, station, credential, query }) => serve(ctx, svc, station, credential, query),
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
  ...graphiqlAssetRoutes,
];
