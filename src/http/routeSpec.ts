import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import type { Static, TSchema } from '@sinclair/typebox';
import type { AdminAccess } from '../lib/operatorScopes.ts';
import type { ReadAreas, Representation } from '../lib/readCache.ts';
import type { ErrorShape } from './envelope.ts';
import type { StationSource } from './gates.ts';
import type { LimitName } from './ratelimit.ts';
import type {
  RouteCredential as Credential,
  RouteModuleKey as ModuleKey,
  RouteScope as Scope,
  RouteServices as Services,
  RouteStation as Station,
} from './subjects.ts';

// What a route declares (its path, surface, gates, schemas, answers and handler) — read by the code
// that runs it (route.ts, adminRoute.ts), by OpenAPI (openapi.ts) and by the cached reads
// (cachedReads.ts). Below all of them: it runs nothing itself.

/**
 * Who a route serves. Its gates come from what the definition declares (`station`, `scope`,
 * `rateLimit`, `module`; the operator token for admin), in one order for every surface:
 * station → credential(scope) → rate limit → module → validate → handler. The surface decides the rest:
 * - listener: JSON; a GET with ETag/304 (and, with `cache`, answered from stored bytes), a write plain
 *   with the status its handler sets (a station app's writes: the inbox)
 * - push, graphql, ingest, media, system: plain answers (media: bytes, not JSON)
 * - admin: the operator token before anything else; JSON
 */
export type Surface = 'listener' | 'push' | 'graphql' | 'admin' | 'ingest' | 'media' | 'system';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  schema?: TSchema;
  /** Defaults to application/json when a schema is given. */
  contentType?: string;
  /** Other media types the same answer comes in (e.g. CSV on request), each with what it holds. */
  alsoAs?: Record<string, string>;
}

type In<S> = S extends TSchema ? Static<S> : undefined;

export interface HandlerArgs<P, Q, B> {
  ctx: Context;
  svc: Services;
  params: In<P>;
  query: In<Q>;
  body: In<B>;
  /** Set on listener and push routes (after the station gate). */
  station: Station;
  /** Set on listener and push routes (after the credential gate). */
  credential: Credential;
}

export interface RouteSpec<
  P extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  B extends TSchema | undefined = TSchema | undefined,
> {
  method: Method;
  /** OpenAPI form: `/api/v1/stations/{stationSlug}/content`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  surface: Surface;
  /** Where the station is named, found by the first gate (gates.ts, `StationSource`). */
  station?: StationSource;
  /** The credential scope the route needs (after the station gate). */
  scope?: Scope;
  module?: ModuleKey;
  /**
   * Admin routes (required): the operator-key scope the call needs, or `root`, and for a write the
   * audit action its entries carry. A route without it does not mount (adminRoute.ts, adminAccessProblem).
   */
  access?: AdminAccess;
  rateLimit?: LimitName;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * How the body is read: `json` (default when `body` is set: any JSON media type, gzip/deflate, no body
   * validates `{}`), `json-object` (only `application/json`, uncompressed, a JSON object — what encoders
   * send), or `none` (the handler reads it).
   */
  bodyParser?: 'json' | 'json-object' | 'none';
  /** Largest JSON body accepted (`'64kb'` or bytes), default 1 MiB. */
  bodyLimit?: string | number;
  /** How errors are written: the `{error: {code, …}}` of docs/errors.md#error-codes (default) or ingest's `{error: string}`. */
  errorShape?: ErrorShape;
  /**
   * `Cache-Control` of every answer under this route's path up to its first parameter — errors and paths
   * no route took included (published media: `private, no-store`); default `no-store`. A handler
   * writing bytes sets it on its own answers too.
   */
  cacheControl?: string;
  /**
   * Another method on this path answers 405 METHOD_NOT_ALLOWED with `Allow` naming the path's methods
   * (ingest, GraphQL); without it, 404 like any unknown route.
   */
  methodNotAllowed?: boolean;
  /** Media type of a raw body the handler reads itself (`bodyParser: 'none'`), for OpenAPI. */
  rawBody?: string;
  /**
   * A query parameter sent empty (`?alt=&focalX=`) counts as not sent: for routes whose documented
   * template lists every optional parameter with an empty value (the admin media upload).
   */
  emptyQueryIsAbsent?: boolean;
  responses: Record<string, ResponseSpec>;
  /**
   * GET only: a page for browsers at the same address (GraphiQL on the GraphQL endpoint). A request whose
   * Accept prefers text/html over JSON gets it before any gate; every other request is the route's.
   */
  page?(ctx: Context, svc: Services): void;
  /**
   * Listener GETs: the data area the answer shows. The answer (a returned `Representation`, or the
   * returned value as JSON) is kept as bytes + ETag in `svc.reads` until a write to that area of the
   * station or until its `validUntil`; repeated reads, and 304s, then do no work after the gates.
   */
  cache?: ReadAreas;
  /**
   * With `cache`: when a write drops an answer that was read from the cache in the last few seconds, it
   * is computed again at once, without a request (lib/readCache.ts, refresh-ahead), so the first polls
   * after a change find it. Only for a handler that reads nothing of `ctx` (its station, params and
   * query only) — the now-playing answers every app polls after a song change.
   */
  refreshAhead?: boolean;
  /**
   * With `refreshAhead`: the answer derived from the seed a write sent with its invalidation (what it
   * already knows of the new answer, lib/invalidation.ts), or undefined when the seed cannot tell (then
   * only the refresh's computation answers). It is put in place at once while that computation runs
   * (lib/readCache.ts `seed`), so the first polls after a change do not wait for a busy database.
   */
  seeded?: (args: { svc: Services; station: Station; query: In<Q>; seed: string }) => Representation | undefined;
  /**
   * Anonymous GETs whose answers a domain keeps as bytes (RadioDNS SPI documents): the stored answer for
   * the request's (decoded) path parameters and headers, or undefined to let the route run. Asked before
   * Koa (storedAnswers.ts), so a hit costs no more than the bytes' write; it must answer exactly what
   * the route would (only answers a valid request produced are ever stored).
   */
  stored?(params: Readonly<Record<string, string>>, req: IncomingMessage, svc: Services): StoredAnswer | undefined;
  handler(args: HandlerArgs<P, Q, B>): unknown;
}

/** What `RouteSpec.stored` returns: bytes with their ETag and media type, and their `Cache-Control`. */
export interface StoredAnswer {
  rep: Representation;
  cacheControl: string;
}

export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}
