// Coded errors. One handler (http/envelope.ts) turns them into the error body of docs/errors.md#error-codes;
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
  /** Members the error object carries beside `code` and `message` (a refused request's `reason`). */
  readonly details?: Readonly<Record<string, string | number>>;
  constructor(message: string, issues?: Issue[]) {
    super(message);
    this.name = new.target.name;
    if (issues && issues.length > 0) this.issues = issues;
  }
}

/** Every code a WavelineError class carries, gathered as the classes are defined (`coded`). */
const CLASS_CODES: string[] = [];

/**
 * The base of a coded error class: `class XError extends coded('X', 4xx) {}`. Defining the class
 * registers its code, so the catalogue (ERROR_CODES) is derived from the classes, not kept by hand.
 */
function coded<const C extends string, const S extends number>(code: C, status: S) {
  CLASS_CODES.push(code);
  return class extends WavelineError {
    readonly code: C = code;
    readonly status: S = status;
  };
}

export class ValidationError extends coded('VALIDATION_ERROR', 400) {}

export class UnauthenticatedError extends coded('UNAUTHENTICATED', 401) {
  constructor(message = 'A valid station credential with the required scope is needed.') {
    super(message);
  }
}

export class ForbiddenError extends coded('FORBIDDEN', 403) {}

/** A path that exists with another method (the ingest path answers POST only); `Allow` names the method. */
export class MethodNotAllowedError extends coded('METHOD_NOT_ALLOWED', 405) {
  readonly allow: string;
  constructor(allow: string) {
    super(`Method not allowed; use ${allow}.`);
    this.allow = allow;
  }
}

export class NotFoundError extends coded('NOT_FOUND', 404) {
  constructor(message = 'Not found.') {
    super(message);
  }
}

export class ModuleDisabledError extends coded('MODULE_DISABLED', 404) {
  constructor(module: string) {
    super(`The ${module} module is switched off for this station.`);
  }
}

export class RevisionConflictError extends coded('REVISION_CONFLICT', 409) {}

export class ProviderMismatchError extends coded('PROVIDER_MISMATCH', 409) {}

export class ConflictError extends coded('CONFLICT', 409) {}

/** The census report of use: the station's `royalties` settings are missing (the message names which). */
export class RoyaltiesNotConfiguredError extends coded('ROYALTIES_NOT_CONFIGURED', 409) {}

/** Push sending at a station without a provider, without its credentials, or with the push module off. */
export class PushNotConfiguredError extends coded('PUSH_NOT_CONFIGURED', 409) {}

/** A program that broadcasts still reference cannot be deleted (the message names how many do). */
export class ProgramInUseError extends coded('PROGRAM_IN_USE', 409) {}

/** An idempotency key used again within 24 h with another body. */
export class IdempotencyConflictError extends coded('IDEMPOTENCY_CONFLICT', 409) {}

/**
 * A song request the station's request policy refuses (docs/inbox.md, "The request policy"): `reason`,
 * and `retryAfterSeconds` when time lifts the refusal, travel inside the error object.
 */
export class RequestRefusedError extends coded('REQUEST_REFUSED', 409) {
  override readonly details: Readonly<Record<string, string | number>>;
  constructor(message: string, reason: string, retryAfterSeconds?: number) {
    super(message);
    this.details = retryAfterSeconds === undefined ? { reason } : { reason, retryAfterSeconds };
  }
}

/** A like or dislike when no play is on air (docs/inbox.md, "Likes"). */
export class NothingPlayingError extends coded('NOTHING_PLAYING', 409) {
  constructor(message = 'Nothing is playing on the station now.') {
    super(message);
  }
}

export class PayloadTooLargeError extends coded('PAYLOAD_TOO_LARGE', 413) {}

export class UnsupportedMediaTypeError extends coded('UNSUPPORTED_MEDIA_TYPE', 415) {}

/** A single byte range that starts past the end of the file; the route sets `Content-Range: bytes *\/size`. */
export class RangeNotSatisfiableError extends coded('RANGE_NOT_SATISFIABLE', 416) {}

export class RateLimitedError extends coded('RATE_LIMITED', 429) {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('Too many requests.');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class ProviderUnavailableError extends coded('PROVIDER_UNAVAILABLE', 503) {}

/** Postgres cannot be reached (refused, cut, or no connection within the timeout): retry shortly. */
export class DatabaseUnavailableError extends ProviderUnavailableError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds = 2) {
    super('The database is temporarily unavailable; retry shortly.');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * Redis cannot take a write now: on a Redis Cluster, a slot without a master (CLUSTERDOWN, TRYAGAIN, the
 * owner refusing connections) until a replica is promoted; on one Redis, the server gone. Retry shortly.
 */
export class RedisUnavailableError extends ProviderUnavailableError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds = 2) {
    super('Redis is temporarily unavailable; retry shortly.');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

// What ioredis rejects a command with while Redis (or the master of its slot) cannot take it: the
// cluster's own refusals, the client giving up on redirections or retries, a closed connection.
const REDIS_UNAVAILABLE =
  /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|MOVED|ASK)\b|Too many Cluster redirections|Failed to refresh slots cache|Cluster is (disconnected|ended)|Cluster isn't ready|Reached the max retries per request limit|Stream isn't writeable|Connection is closed|None of startup nodes is available|No sharded subscriber/;

/** Whether an error of a Redis command means Redis (or its slot's master) cannot answer now. */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError' || err.name === 'ClusterAllFailedError') return true;
  const code = (err as { code?: unknown }).code;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE') return true;
  return REDIS_UNAVAILABLE.test(err.message) || (err.cause !== undefined && err.cause !== err && isRedisUnavailable(err.cause));
}

/** An `Accept` header naming no representation the route can send. */
export class NotAcceptableError extends coded('NOT_ACCEPTABLE', 406) {}

// Socket errors and the SQLSTATE classes of a server that is gone or refuses connections (08
// connection exception, 57P01-03 shutdown / cannot connect now), and the pool's and driver's own
// "no connection in time" errors (pg's Client says "timeout expired" when connectionTimeoutMillis passes).
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
]);
const UNREACHABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|^timeout expired$|Client has encountered a connection error|Connection is closed|Knex: Timeout acquiring a connection/;

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

/**
 * The catalogue of codes the error body can carry: every class's code, and INTERNAL_ERROR (the envelope's
 * answer to anything uncoded). docs/errors.md lists each (a test checks).
 */
export const ERROR_CODES: readonly string[] = Object.freeze([...CLASS_CODES, 'INTERNAL_ERROR']);
