import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import type { Router, RouterMiddleware } from '@koa/router';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type {
  RouteCredential as Credential,
  RouteModuleKey as ModuleKey,
  RouteScope as Scope,
  RouteServices as Services,
  RouteStation as Station,
} from './subjects.ts';
import { bearerToken, credentialGate, moduleGate, rateLimitGate, stationGates, type Gate, type StationSource } from './gates.ts';
import { UnauthenticatedError } from '../lib/errors.ts';
import type { LimitName } from './ratelimit.ts';
import { sendCacheable, sendJson } from './etag.ts';
import { readKey, Representation, type ReadAreas } from '../lib/readCache.ts';
import { validate } from './validate.ts';
import { byteLimit, readJsonBody, readJsonObject } from './body.ts';
import type { ErrorShape } from './envelope.ts';
import { adminRoute } from './adminRoute.ts';
import type { AdminAccess } from '../lib/operatorScopes.ts';

/**
 * Who a route serves. Its gates come from what the definition declares (`station`, `scope`,
 * `rateLimit`, `module`; the operator token for admin), in one order for every surface:
 * station → credential(scope) → rate limit → module → validate → handler. The surface decides the rest:
 * - listener: JSON with ETag/304 (and, with `cache`, answered from stored bytes)
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
  /** How errors are written: the contract's `{error: {code, …}}` (default) or ingest's `{error: string}`. */
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

/** Whether a cached read's key holds the request path: the route has parameters besides the station. */
export const keyHoldsPath = (openapiPath: string): boolean => /\{(?!stationSlug\})/.test(openapiPath);

export const koaPath = (openapiPath: string): string => openapiPath.replace(/\{([^}]+)\}/g, ':$1');

function gatesFor(route: RouteSpec, svc: Services): Gate[] {
  if (route.surface === 'admin') return []; // adminRoute() authenticates, authorizes and audits
  // A credential belongs to one station: the route must say where that station is named.
  if (route.scope && !route.station)
    throw new Error(`route ${route.operationId} declares a scope but not where its station is named (station)`);
  const gates: Gate[] = [];
  const station = route.station ? stationGates(svc, route.station) : undefined;
  if (station) gates.push(station.before);
  if (route.scope) gates.push(credentialGate(svc, route.scope));
  if (station?.afterCredential) gates.push(station.afterCredential);
  // Per credential when there is one, else per client IP (anonymous media).
  if (route.rateLimit) gates.push(rateLimitGate(svc, route.rateLimit));
  if (route.module) gates.push(moduleGate(route.module));
  return gates;
}

/** What a listener read that takes no parameters validates its query with: unknown ones are 400, as on every other. */
const NO_PARAMETERS = Type.Object({}, { additionalProperties: false });

/**
 * A route as ONE middleware that runs its steps in order — error shape, gates, body parser,
 * validation, handler — rather than a chain of middleware, so a request pays for one call.
 */
export function routeMiddleware(route: RouteSpec, svc: Services): Middleware {
  const legacyErrors = route.errorShape === 'legacy';
  const gates = gatesFor(route, svc);
  const parser = route.body === undefined ? 'none' : (route.bodyParser ?? 'json');
  const querySchema = route.query ?? (route.surface === 'listener' && route.method === 'get' ? NO_PARAMETERS : undefined);
  const jsonLimit = byteLimit(route.bodyLimit ?? '1mb');
  const readsBody = (method: string): boolean => method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
  // The input that names the station is validated before the gates (they read it from ctx.state);
  // everything else after them, so a request without a credential learns nothing from validation.
  const namedIn = route.station === 'query' || route.station === 'body' ? route.station : null;

  const queryOf = route.emptyQueryIsAbsent
    ? (ctx: Context) => Object.fromEntries(Object.entries(ctx.query).filter(([, value]) => value !== ''))
    : (ctx: Context) => ({ ...ctx.query });
  const readQuery = (ctx: Context): unknown => (querySchema ? validate(querySchema, 'query', queryOf(ctx)) : undefined);
  const readBody = async (ctx: Context): Promise<unknown> => {
    if (parser === 'none' || !route.body) return undefined;
    if (parser === 'json-object') return validate(route.body, 'body', await readJsonObject(ctx, jsonLimit));
    const raw = readsBody(ctx.method) ? await readJsonBody(ctx, jsonLimit) : undefined;
    return validate(route.body, 'body', raw === undefined ? {} : raw);
  };
  const readNamingInput = async (ctx: Context): Promise<void> => {
    if (namedIn === 'query') ctx.state.query = readQuery(ctx);
    else ctx.state.body = await readBody(ctx);
  };

  const compute = async (ctx: Context): Promise<unknown> => {
    const params = route.params ? validate(route.params, 'params', { ...ctx.params }) : undefined;
    const query = namedIn === 'query' ? ctx.state.query : readQuery(ctx);
    const body = namedIn === 'body' ? ctx.state.body : await readBody(ctx);
    return route.handler({
      ctx,
      svc,
      params,
      query,
      body,
      station: ctx.state.station,
      credential: ctx.state.credential,
    } as HandlerArgs<TSchema, TSchema, TSchema>);
  };

  const handle = async (ctx: Context): Promise<void> => {
    const result = await compute(ctx);
    if (result === undefined) return;
    if (result instanceof Representation) sendCacheable(ctx, result.bytes, result.contentType, result.etag);
    else if (route.surface === 'listener') sendJson(ctx, result);
    else ctx.body = result;
  };

  // A cached listener read: after the gates (a 304 never comes before the credential gate), the stored
  // answer while it is exact; otherwise one computation per key and data generation (lib/readCache.ts).
  // The key is the raw path and query string: a hit skips validation, as only valid requests are stored.
  const area = route.surface === 'listener' && route.method === 'get' ? route.cache : undefined;
  const pathInKey = keyHoldsPath(route.path);
  const toRepresentation = (result: unknown): Representation => (result instanceof Representation ? result : Representation.json(result));
  const handleCached = (ctx: Context): Promise<void> | void => {
    const stationId = (ctx.state.station as Station).id;
    const key = readKey(route.operationId, stationId, pathInKey ? ctx.path : '', ctx.querystring);
    const answer = svc.reads.read(key, stationId, area as ReadAreas, svc.clock.now().getTime(), () => compute(ctx).then(toRepresentation));
    if (answer instanceof Representation) return sendCacheable(ctx, answer.bytes, answer.contentType, answer.etag);
    return answer.then((rep) => sendCacheable(ctx, rep.bytes, rep.contentType, rep.etag));
  };
  const finish = area === undefined ? handle : handleCached;

  // Gates answer synchronously on a cache hit; only a gate that returns a promise costs a hop.
  const runFrom = (ctx: Context, first: number): Promise<void> | void => {
    for (let i = first; i < gates.length; i++) {
      const pending = gates[i](ctx);
      if (pending) return pending.then(() => runFrom(ctx, i + 1));
    }
    return finish(ctx);
  };

  const page = route.page;
  const run = (ctx: Context): Promise<void> | void => {
    ctx.state.route = route.path; // the template, for metrics and the request log (observe.ts)
    if (legacyErrors) ctx.state.errorShape = 'legacy' satisfies ErrorShape;
    if (page && prefersHtml(ctx)) return Promise.resolve(page(ctx, svc));
    if (namedIn) {
      // A request with no Bearer credential at all is 401 before its station-naming input is read (an
      // encoder that forgot the header learns that first, not which query parameter is missing).
      if (route.scope && bearerToken(ctx) === null) throw new UnauthenticatedError();
      return readNamingInput(ctx).then(() => runFrom(ctx, 0));
    }
    return runFrom(ctx, 0);
  };
  return route.surface === 'admin' ? adminRoute(route, svc, run) : run;
}

/** Registers a route with @koa/router (admin and other routes; listener reads use dispatch.ts). */
export function mountRoute(router: Router, route: RouteSpec, svc: Services): void {
  router.register(koaPath(route.path), [route.method.toUpperCase()], [routeMiddleware(route, svc) as RouterMiddleware], {
    name: route.operationId,
  });
}

/** A browser navigating (Accept: text/html, …); any-type, no Accept or a JSON type first stay API requests. */
function prefersHtml(ctx: Context): boolean {
  const accept = ctx.get('accept');
  return accept.includes('text/html') && ctx.accepts('application/graphql-response+json', 'application/json', 'text/html') === 'text/html';
}
