import type { Context } from 'koa';
import { readJsonBody } from '../http/body.ts';
import { jsonIssue } from '../http/hostile.ts';
import { Type } from '../http/schema.ts';
import { validate } from '../http/validate.ts';
import { NotAcceptableError, UnsupportedMediaTypeError, ValidationError } from '../lib/errors.ts';

// What graphql-http would answer with a bare status and a text body: checked here first, so every
// answer before the query runs is the error body of docs/errors.md#error-codes (docs/graphql.md).

const MAX_BODY_BYTES = 64 * 1024;

export const GraphQLBody = Type.Object({
  query: Type.String(),
  variables: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  operationName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  extensions: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
});

const ACCEPTED = /^(application\/graphql-response\+json|application\/json|application\/\*|\*\/\*)(;|$)/;

export function checkAccept(accept: string): void {
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
export async function readOperation(ctx: Context): Promise<Record<string, unknown>> {
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
export function checkQueryParameters(query: Record<string, unknown>): void {
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
