import {
  buildSchema,
  type GraphQLObjectType,
  parse,
  validate as validateDocument,
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import { createHandler, type Request as GraphQLHttpRequest } from 'graphql-http';
import type { Context } from 'koa';
import { defineRoute } from '../http/route.ts';
import { readJsonBody } from '../http/body.ts';
import { jsonIssue } from '../http/hostile.ts';
import { ErrorBody, StationSlugParams, Type } from '../http/schema.ts';
import { validate } from '../http/validate.ts';
import {
  DatabaseUnavailableError,
  MethodNotAllowedError,
  NotAcceptableError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../lib/errors.ts';
import { limitRules } from './limits.ts';
import type { WebServices } from '../services.ts';
import type { Station } from '../domains/stations/model.ts';
import type { Credential } from '../domains/auth/model.ts';
import { statusFor } from './errors.ts';
import { rootValue } from './resolvers.ts';
import type { GraphQLContext } from './context.ts';
import { graphqlKey, Representation, UnkeptAnswer } from '../lib/readCache.ts';
import { cacheLookup } from '../lib/metrics.ts';
import { typeDefs } from './sdl.ts';
import { graphiqlAssetRoutes, graphiqlPage } from './graphiql.ts';

export const schema = buildSchema(typeDefs);

// GraphQL names cannot start with a digit: `ArtworkVariants._300` reads the presenter's "300" (and so on).
for (const field of Object.values((schema.getType('ArtworkVariants') as GraphQLObjectType).getFields())) {
  const key = field.name.slice(1);
  field.resolve = (variants: Record<string, string>) => variants[key];
}

const MAX_BODY_BYTES = 64 * 1024;

/**
 * A document is parsed and validated once per query text: apps send the same few queries on every
 * poll. Parsed documents are kept by text (LRU, bounded in count and size; very long texts are not kept), and
 * the validation errors by document (the schema and rules never change in a process).
 */
const MAX_CACHED_QUERY_LENGTH = 16 * 1024;
// Bounded in count and in an estimate of the parsed size (a document's AST is several times its text).
const documents = new LRUCache<string, DocumentNode>({
  max: 1000,
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (_document, source) => 64 + source.length * 8,
});
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
  const errors = validateDocument(target, document, rules);
  validations.set(document, errors);
  return errors;
}

type Extra = { svc: WebServices; station: Station; credential: Credential; result: GraphQLContext };

/**
 * Root fields whose answers come only from the cached listener reads (graphql/reads.ts, resolvers.ts)
 * or the station itself. A document that asks for nothing else gets its whole response kept (below);
 * any other root field (the editorial preview mutation, which reads drafts) makes it uncached.
 */
const CACHED_FIELDS = new Set([
  'station',
  'schemas',
  'content',
  'contentRecord',
  'contentBySlug',
  'schedule',
  'programs',
  'currentBroadcast',
  'nowPlaying',
  'live',
  'trackHistory',
  'weather',
  'traffic',
]);

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
  validate: validateOnce as typeof validateDocument,
  context: (req) => req.context.result,
  // Depth, alias and cost limits refuse an operation before any resolver runs (limits.ts).
  validationRules: (req, args, specified) => {
    const refused = () => (req.context.result.status = 400);
    // validateOnce answers a document it validated before without running the rules again: a refusal
    // it keeps is still a 400, on every request that sends that text.
    if (statusFor(validations.get(args.document)) !== null) refused();
    return [...specified, ...limitRules(req.context.svc.config.graphql, refused)];
  },
  onOperation(req, _args, result) {
    const status = statusFor(result.errors);
    if (status !== null) req.context.result.status = status;
    if (result.errors?.length) req.context.result.answer = undefined;
    // As on REST (http/envelope.ts): a 503 says when to retry.
    if (status === 503) req.context.result.retryAfter = retryAfterOf(result.errors);
  },
});

const JSON_RESPONSE = 'application/json; charset=utf-8';

// What graphql-http would answer with a bare status and a text body: checked here first, so every
// answer before the query runs is the contract's error body (docs/graphql.md).
const ACCEPTED = /^(application\/graphql-response\+json|application\/json|application\/\*|\*\/\*)(;|$)/;

function checkAccept(accept: string): void {
  if (!accept) return;
  const ranges = accept.replace(/\s/g, '').toLowerCase().split(',');
  // A range counts unless it names another charset or refuses the type (`q=0`, RFC 9110 §12.4.2).
  if (ranges.some((range) => ACCEPTED.test(range) && !/;charset=(?!utf-?8(;|$))/.test(range) && !/;q=0(\.0{0,3})?(;|$)/.test(range)))
    return;
  throw new NotAcceptableError(
    'GraphQL answers application/graphql-response+json or application/json (UTF-8); the Accept header allows neither.',
  );
}

/** A POST body: a JSON object `{query, variables?, operationName?, extensions?}` in UTF-8. */
async function readOperation(ctx: Context): Promise<Record<string, unknown>> {
  const [mediaType, ...parameters] = ctx.get('content-type').replace(/\s/g, '').toLowerCase().split(';');
  const charset = parameters.find((p) => p.startsWith('charset='));
  if (mediaType !== 'application/json' || (charset && charset !== 'charset=utf-8'))
    throw new UnsupportedMediaTypeError('Content-Type must be application/json (UTF-8).');
  const body = await readJsonBody(ctx, MAX_BODY_BYTES);
  if (body === undefined)
    throw new ValidationError('Invalid request body.', [{ path: 'query', code: 'required', message: 'query is required' }]);
  return validate<Record<string, unknown>>(GraphQLBody, 'body', body);
}

/** A GET's parameters: `query` is required, `variables` and `extensions` are JSON objects as strings. */
function checkQueryParameters(query: Record<string, unknown>): void {
  if (typeof query.query !== 'string')
    throw new ValidationError('Invalid query parameters.', [{ path: 'query', code: 'required', message: 'query is required' }]);
  for (const name of ['variables', 'extensions']) {
    const text = query[name];
    if (typeof text !== 'string' || text === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || Array.isArray(parsed))
      throw new ValidationError('Invalid query parameters.', [
        { path: name, code: 'invalid_format', message: `${name} must be a JSON object` },
      ]);
    const issue = jsonIssue(parsed, name);
    if (issue) throw new ValidationError('Invalid query parameters.', [issue]);
  }
}

/**
 * Runs one GraphQL over HTTP request (GET queries only, POST queries and mutations).
 *
 * A response built only from cached reads is kept as bytes in the read cache (lib/readCache.ts) under
 * the request's method, Accept and Content-Type headers and query string (GET) or body (POST), with the
 * areas its reads showed and the earliest instant one of them changes: the same request then skips
 * parsing, execution and serialisation until a write to one of those areas or that instant.
 */
async function serve(
  ctx: Context,
  svc: WebServices,
  station: Station,
  credential: Credential,
  query?: Record<string, unknown>,
): Promise<void> {
  checkAccept(ctx.get('accept'));
  // HEAD is GET without the body (Koa leaves the body out and keeps its length): the same operation and answer.
  const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
  let operation: Record<string, unknown> | null = null;
  if (method === 'POST') operation = await readOperation(ctx);
  else checkQueryParameters(query ?? {});
  // Only valid requests get here, so a hit is an answer this very operation had before.
  const key = graphqlKey(
    method,
    station.id,
    ctx.get('accept'),
    ctx.get('content-type'),
    operation ? JSON.stringify(operation) : ctx.querystring,
  );
  const nowMs = svc.clock.now().getTime();
  const hit = svc.reads.peek(key, nowMs);
  cacheLookup('graphql', hit !== undefined);
  if (hit !== undefined) return sendKept(ctx, hit);
  // A query (GET) the same as one running now waits for its answer — kept, while exact at this request's
  // time, or not kept (an error's: sent as it is); a mutation (POST) always runs.
  const isQuery = method === 'GET';
  const running = isQuery ? svc.reads.running(key, station.id) : undefined;
  if (running !== undefined) {
    const joined = await running.then(
      (rep) => (rep.validUntil > nowMs ? rep : undefined),
      (err: unknown) => (err instanceof UnkeptAnswer ? err : undefined),
    );
    if (joined instanceof UnkeptAnswer) return sendUnkept(ctx, joined);
    if (joined !== undefined) return sendKept(ctx, joined);
  }
  const flight = isQuery ? svc.reads.begin(key, station.id) : undefined;
  let shared: Representation | UnkeptAnswer | undefined;
  try {
    shared = await execute(
      ctx,
      svc,
      station,
      credential,
      operation,
      method,
      key,
      nowMs,
      flight?.generation ?? svc.reads.generation(station.id),
    );
  } finally {
    flight?.end(shared);
  }
}

function sendKept(ctx: Context, rep: Representation): void {
  ctx.status = 200;
  ctx.set('Content-Type', rep.contentType);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = rep.bytes;
}

/** The answer, not kept, of the same query's run this request waited for (an error's, a 503's in an outage). */
function sendUnkept(ctx: Context, answer: UnkeptAnswer): void {
  ctx.status = answer.status;
  ctx.set('Content-Type', answer.contentType);
  ctx.set('Cache-Control', 'no-store');
  if (answer.retryAfter !== undefined) ctx.set('Retry-After', answer.retryAfter);
  ctx.body = answer.bytes;
}

/** The longest `retryAfterSeconds` among the errors' originals (DatabaseUnavailableError's), else its default. */
function retryAfterOf(errors: readonly GraphQLError[] | undefined): number {
  let seconds: number | undefined;
  for (const err of errors ?? []) {
    const original = err.originalError as { retryAfterSeconds?: unknown } | undefined;
    if (typeof original?.retryAfterSeconds === 'number') seconds = Math.max(seconds ?? 0, original.retryAfterSeconds);
  }
  return seconds ?? new DatabaseUnavailableError().retryAfterSeconds;
}

/**
 * Runs the operation and answers it; returns the answer it kept, or the answer it sent that is not kept
 * (an error's), for the requests waiting for this run.
 */
async function execute(
  ctx: Context,
  svc: WebServices,
  station: Station,
  credential: Credential,
  operation: Record<string, unknown> | null,
  method: string,
  key: string,
  nowMs: number,
  generation: number,
): Promise<Representation | UnkeptAnswer | undefined> {
  const context: GraphQLContext = {
    svc,
    station,
    credential,
    previewGrant: ctx.get('x-preview-grant') || undefined,
    answer: { areas: new Set(), validUntil: Infinity },
  };
  const request: GraphQLHttpRequest<Context, Extra> = {
    method,
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
  const retryAfter = context.retryAfter !== undefined ? String(context.retryAfter) : undefined;
  if (retryAfter !== undefined) ctx.set('Retry-After', retryAfter);
  ctx.body = body ?? '';
  if (typeof body !== 'string' || body.length === 0) return undefined;
  const contentType = (init.headers as Record<string, string> | undefined)?.['content-type'] ?? JSON_RESPONSE;
  const answer = context.answer;
  if (!answer || ctx.status !== 200) return new UnkeptAnswer(ctx.status, Buffer.from(body), contentType, retryAfter);
  const kept = new Representation(Buffer.from(body), contentType, answer.validUntil);
  svc.reads.store(key, station.id, [...answer.areas], generation, kept, nowMs);
  return kept;
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
  station: 'slug' as const,
  scope: 'listener:read' as const,
  methodNotAllowed: true,
  module: 'graphql' as const,
  rateLimit: 'graphql' as const,
  params: StationSlugParams,
  responses: {
    200: { description: '`{data, errors}`; check `errors` first.', schema: GraphQLResult },
    400: {
      description:
        'VALIDATION_ERROR in `errors` (an argument, or the depth, alias or cost limit), or before the query runs a REST error body: malformed JSON, missing `query`, `variables` not an object, text with NUL.',
      schema: GraphQLResult,
    },
    401: { description: 'Missing or invalid credential (REST error body, before the query runs).', schema: ErrorBody },
    404: {
      description: 'Station unknown, inactive or offline (REST error body, before the query runs), or NOT_FOUND in errors.',
      schema: ErrorBody,
    },
    405: { description: 'A mutation over GET (METHOD_NOT_ALLOWED, `Allow: POST`; REST error body).', schema: ErrorBody },
    406: {
      description:
        'An `Accept` header that allows neither application/graphql-response+json nor application/json (NOT_ACCEPTABLE; REST error body).',
      schema: ErrorBody,
    },
    413: { description: 'A POST body over 64 KiB (PAYLOAD_TOO_LARGE; REST error body).', schema: ErrorBody },
    415: { description: 'A POST that is not application/json in UTF-8 (UNSUPPORTED_MEDIA_TYPE; REST error body).', schema: ErrorBody },
    503: {
      description:
        'Postgres is unreachable: PROVIDER_UNAVAILABLE in `errors`, or before the query runs a REST error body; retry after `Retry-After` seconds.',
      schema: GraphQLResult,
    },
  },
};

export const graphqlRoutes = [
  defineRoute({
    ...common,
    method: 'get',
    operationId: 'graphqlGet',
    summary: 'GraphQL query over GET (queries only)',
    description:
      'GraphQL over HTTP (graphql-http). A browser that asks for text/html (and not JSON) gets GraphiQL instead, with a field for the credential.',
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
