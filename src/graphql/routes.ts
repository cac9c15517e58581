import { buildSchema } from 'graphql';
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
import { graphiqlAssetRoutes, graphiqlPage } from './graphiql.ts';

export const schema = buildSchema(typeDefs);

const MAX_BODY_BYTES = 64 * 1024;

type Extra = { svc: Services; station: Station; credential: Credential; result: GraphQLContext };

const handler = createHandler<Context, Extra, GraphQLContext>({
  schema,
  rootValue,
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
    description: 'GraphQL over HTTP (graphql-http). A browser that asks for text/html (and not JSON) gets GraphiQL instead, with a field for the credential.',
    query: GraphQLParams,
    page: graphiqlPage,
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
  ...graphiqlAssetRoutes,
];
