import { buildSchema, type GraphQLObjectType, type parse, type validate } from 'graphql';
import { createHandler } from 'graphql-http';
import type { Context } from 'koa';
import type { WebServices } from '../services.ts';
import type { Station } from '../domains/stations/model.ts';
import type { Credential } from '../domains/auth/model.ts';
import type { GraphQLContext } from './context.ts';
import { parseOnce, validateOnce, keptValidation } from './documents.ts';
import { retryAfterOf, statusFor } from './errors.ts';
import { limitRules } from './limits.ts';
import { rootValue } from './resolvers.ts';
import { typeDefs } from './sdl.ts';
import { trackedRoot } from './tracking.ts';

// One operation run by graphql-http: the schema, the root resolvers (tracked, tracking.ts), documents
// parsed and validated once (documents.ts), the limits (limits.ts), and the HTTP status and Retry-After
// that follow the result's coded errors (errors.ts).

const schema = buildSchema(typeDefs);

// GraphQL names cannot start with a digit: `ArtworkVariants._300` reads the presenter's "300" (and so on).
for (const field of Object.values((schema.getType('ArtworkVariants') as GraphQLObjectType).getFields())) {
  const key = field.name.slice(1);
  field.resolve = (variants: Record<string, string>) => variants[key];
}

export type Extra = { svc: WebServices; station: Station; credential: Credential; result: GraphQLContext };

export const handler = createHandler<Context, Extra, GraphQLContext>({
  schema,
  rootValue: trackedRoot(rootValue),
  parse: parseOnce as typeof parse,
  validate: validateOnce as typeof validate,
  context: (req) => req.context.result,
  // Depth, alias and cost limits refuse an operation before any resolver runs (limits.ts).
  validationRules: (req, args, specified) => {
    const refused = () => (req.context.result.status = 400);
    // validateOnce answers a document it validated before without running the rules again: a refusal
    // it keeps is still a 400, on every request that sends that text.
    if (statusFor(keptValidation(args.document)) !== null) refused();
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
