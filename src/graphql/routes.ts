import { defineRoute } from '../http/route.ts';
import { ErrorBody, StationSlugParams, Type } from '../http/schema.ts';
import { GraphQLBody } from './negotiation.ts';
import { serve } from './serve.ts';
import { graphiqlAssetRoutes, graphiqlPage } from './graphiql.ts';

// The GraphQL endpoint's routes (docs/graphql.md): what they declare for the gates and /openapi.json.
// A request is served by serve.ts: negotiation (negotiation.ts), the kept response (the read cache),
// the operation (handler.ts: documents.ts, tracking.ts, limits.ts).

const GraphQLParams = Type.Object(
  {
    query: Type.Optional(Type.String({ description: 'the GraphQL document (queries only over GET)' })),
    variables: Type.Optional(Type.String({ description: 'JSON object, as a string' })),
    operationName: Type.Optional(Type.String()),
    extensions: Type.Optional(Type.String({ description: 'JSON object, as a string' })),
  },
  { additionalProperties: true },
);

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
