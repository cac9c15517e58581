import { GraphQLError } from 'graphql';
import {
  DatabaseUnavailableError,
  NotFoundError,
  ValidationError,
  WavelineError,
  isDataException,
  isDatabaseUnreachable,
  type Issue,
} from '../lib/errors.ts';

/** Turns our coded errors into GraphQL errors with `extensions.code` (clients branch on it). */
export function toGraphQLError(raw: unknown): GraphQLError {
  if (raw instanceof GraphQLError) return raw;
  // As on REST (http/envelope.ts): Postgres unreachable is retryable, text it refuses is the caller's.
  const err = isDatabaseUnreachable(raw)
    ? new DatabaseUnavailableError()
    : isDataException(raw)
      ? new ValidationError('A value in the request cannot be stored.', [
          { path: '', code: 'invalid_value', message: 'an argument holds text the database cannot hold (NUL, unpaired surrogates)' },
        ])
      : raw;
  if (err instanceof WavelineError) {
    // GraphQL reports a switched-off module as NOT_FOUND (the REST code is MODULE_DISABLED).
    const code = err.code === 'MODULE_DISABLED' ? 'NOT_FOUND' : err.code;
    return new GraphQLError(err.message, { extensions: { code, ...(err.issues ? { issues: err.issues } : {}) }, originalError: err });
  }
  return new GraphQLError('Internal server error.', {
    extensions: { code: 'INTERNAL_ERROR' },
    originalError: err instanceof Error ? err : undefined,
  });
}

/** Runs a resolver body, converting thrown errors. */
export async function guard<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toGraphQLError(err);
  }
}

export const invalid = (path: string, message: string, extra: Partial<Issue> = {}): ValidationError =>
  new ValidationError(message, [{ path, message, code: 'invalid_value', ...extra }]);

export const notFound = (message: string): NotFoundError => new NotFoundError(message);

const STATUS: Record<string, number> = {
  VALIDATION_ERROR: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  REVISION_CONFLICT: 409,
  RATE_LIMITED: 429,
  PROVIDER_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
};

/** The HTTP status that follows the most severe coded error (the highest status), or null. */
export function statusFor(errors: readonly GraphQLError[] | undefined): number | null {
  let status: number | null = null;
  for (const err of errors ?? []) {
    const code = err.extensions?.code;
    const s = typeof code === 'string' ? STATUS[code] : undefined;
    if (s !== undefined && (status === null || s > status)) status = s;
  }
  return status;
}

/** The longest `retryAfterSeconds` among the errors' originals (DatabaseUnavailableError's), else its default. */
export function retryAfterOf(errors: readonly GraphQLError[] | undefined): number {
  let seconds: number | undefined;
  for (const err of errors ?? []) {
    const original = err.originalError as { retryAfterSeconds?: unknown } | undefined;
    if (typeof original?.retryAfterSeconds === 'number') seconds = Math.max(seconds ?? 0, original.retryAfterSeconds);
  }
  return seconds ?? new DatabaseUnavailableError().retryAfterSeconds;
}
