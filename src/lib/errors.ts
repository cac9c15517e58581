// Coded errors. One handler (http/envelope.ts) turns them into the contract's error body;
// callers branch with `instanceof`, never by reading messages.

export interface Issue {
  path: string;
  message: string;
  code?: string;
  suggestion?: string | number;
}

export abstract class WavelineError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  readonly issues?: Issue[];
  constructor(message: string, issues?: Issue[]) {
    super(message);
    this.name = new.target.name;
    if (issues && issues.length > 0) this.issues = issues;
  }
}

export class ValidationError extends WavelineError {
  readonly code = 'VALIDATION_ERROR';
  readonly status = 400;
}

export class UnauthenticatedError extends WavelineError {
  readonly code = 'UNAUTHENTICATED';
  readonly status = 401;
  constructor(message = 'A valid station credential with the required scope is needed.') {
    super(message);
  }
}

export class ForbiddenError extends WavelineError {
  readonly code = 'FORBIDDEN';
  readonly status = 403;
}

/** A path that exists with another method (the ingest path answers POST only); `Allow` names the method. */
export class MethodNotAllowedError extends WavelineError {
  readonly code = 'METHOD_NOT_ALLOWED';
  readonly status = 405;
  readonly allow: string;
  constructor(allow: string) {
    super(`Method not allowed; use ${allow}.`);
    this.allow = allow;
  }
}

export class NotFoundError extends WavelineError {
  readonly code = 'NOT_FOUND';
  readonly status = 404;
  constructor(message = 'Not found.') {
    super(message);
  }
}

export class ModuleDisabledError extends WavelineError {
  readonly code = 'MODULE_DISABLED';
  readonly status = 404;
  constructor(module: string) {
    super(`The ${module} module is switched off for this station.`);
  }
}

export class RevisionConflictError extends WavelineError {
  readonly code = 'REVISION_CONFLICT';
  readonly status = 409;
}

export class ProviderMismatchError extends WavelineError {
  readonly code = 'PROVIDER_MISMATCH';
  readonly status = 409;
}

export class ConflictError extends WavelineError {
  readonly code = 'CONFLICT';
  readonly status = 409;
}

export class PayloadTooLargeError extends WavelineError {
  readonly code = 'PAYLOAD_TOO_LARGE';
  readonly status = 413;
}

export class UnsupportedMediaTypeError extends WavelineError {
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
  readonly status = 415;
}

/** A single byte range that starts past the end of the file; the route sets `Content-Range: bytes *\/size`. */
export class RangeNotSatisfiableError extends WavelineError {
  readonly code = 'RANGE_NOT_SATISFIABLE';
  readonly status = 416;
}

export class RateLimitedError extends WavelineError {
  readonly code = 'RATE_LIMITED';
  readonly status = 429;
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('Too many requests.');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class ProviderUnavailableError extends WavelineError {
  readonly code = 'PROVIDER_UNAVAILABLE';
  readonly status = 503;
}

/** Postgres cannot be reached (refused, cut, or no connection within the timeout): retry shortly. */
export class DatabaseUnavailableError extends ProviderUnavailableError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds = 2) {
    super('The database is temporarily unavailable; retry shortly.');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** An `Accept` header naming no representation the route can send. */
export class NotAcceptableError extends WavelineError {
  readonly code = 'NOT_ACCEPTABLE';
  readonly status = 406;
}

// Socket errors and the SQLSTATE classes of a server that is gone or refuses connections (08
// connection exception, 57P01-03 shutdown / cannot connect now), and the pool's and driver's own
// "no connection in time" errors (pg's Client says "timeout expired" when connectionTimeoutMillis passes).
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P02', '57P03']);
const UNREACHABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|^timeout expired$|Client has encountered a connection error|Connection is closed|Knex: Timeout acquiring a connection/;

/** Whether an error thrown by a database call means Postgres is unreachable (not that the query is wrong). */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || code.startsWith('08'))) return true;
  if (err.name === 'KnexTimeoutError' || UNREACHABLE_MESSAGES.test(err.message)) return true;
  const errors = (err as { errors?: unknown }).errors; // AggregateError of a refused dual-stack connect
  return Array.isArray(errors) && errors.some(isDatabaseUnreachable);
}

/**
 * A Postgres data exception (SQLSTATE class 22: text with NUL or that is not UTF-8, a value out of a
 * column's range): input the database refused, answered 400 rather than 500.
 */
export function isDataException(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && typeof severity === 'string' && code.startsWith('22');
}

/** The catalogue of codes the error body can carry; docs/errors.md lists each (a test checks). */
export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'MODULE_DISABLED',
  'REVISION_CONFLICT',
  'PROVIDER_MISMATCH',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RANGE_NOT_SATISFIABLE',
  'RATE_LIMITED',
  'PROVIDER_UNAVAILABLE',
  'METHOD_NOT_ALLOWED',
  'NOT_ACCEPTABLE',
  'INTERNAL_ERROR',
] as const;
