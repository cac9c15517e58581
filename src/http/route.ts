import type { Context, Middleware } from 'koa';
import type { Router, RouterMiddleware } from '@koa/router';
import { Type, type TSchema } from '@sinclair/typebox';
import type { RouteServices as Services, RouteStation as Station } from './subjects.ts';
import { bearerToken, credentialGate, moduleGate, rateLimitGate, stationGates, type Gate } from './gates.ts';
import { UnauthenticatedError } from '../lib/errors.ts';
import { readOn } from '../lib/replicas/routing.ts';
import { sendCacheable, sendJson } from './etag.ts';
import { readKey, Representation, type ReadAreas, type ReadBasis, type Refresh } from '../lib/readCache.ts';
import { validate } from './validate.ts';
import { byteLimit, readJsonBody, readJsonObject } from './body.ts';
import type { ErrorShape } from './envelope.ts';
import { adminRoute } from './adminRoute.ts';
import type { HandlerArgs, RouteSpec } from './routeSpec.ts';

// How a declared route (routeSpec.ts) runs: its gates, body, validation, handler and answer as one
// middleware. A route file needs only this module: the declaration is handed on from here.
export { defineRoute } from './routeSpec.ts';
export type { HandlerArgs, Method, ResponseSpec, RouteSpec, StoredAnswer, Surface } from './routeSpec.ts';

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

/** What a refresh-ahead computation has of the request that first computed the answer. */
interface DetachedInputs {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  station: unknown;
  credential: unknown;
}

/** The `ctx` of a computation with no request (refresh-ahead): a handler that reads it fails, and the next read computes. */
const DETACHED_CTX = new Proxy({} as Context, {
  get(_target, property) {
    throw new Error(`a refresh-ahead computation has no request (ctx.${String(property)})`);
  },
});

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

  const compute = async (ctx: Context, on: Services = svc): Promise<unknown> => {
    const params = route.params ? validate(route.params, 'params', { ...ctx.params }) : undefined;
    const query = namedIn === 'query' ? ctx.state.query : readQuery(ctx);
    const body = namedIn === 'body' ? ctx.state.body : await readBody(ctx);
    return route.handler({
      ctx,
      svc: on,
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
    // A listener read's answer carries its ETag; a listener write answers plainly, with the status its handler set.
    else if (route.surface === 'listener' && route.method === 'get') sendJson(ctx, result);
    else ctx.body = result;
  };

  // A cached listener read: after the gates (a 304 never comes before the credential gate), the stored
  // answer while it is exact; otherwise one computation per key and data generation (lib/readCache.ts).
  // The key is the raw path and query string: a hit skips validation, as only valid requests are stored.
  const area = route.surface === 'listener' && route.method === 'get' ? route.cache : undefined;
  const pathInKey = keyHoldsPath(route.path);
  const toRepresentation = (result: unknown): Representation => (result instanceof Representation ? result : Representation.json(result));
  // With read replicas, the handler reads where lib/replicas/routing.ts routes the station's read (a replica that
  // has replayed its last write, else the primary), and the answer remembers where it was read (`basis`).
  const computeRead = (ctx: Context, stationId: string, basis: ReadBasis): Promise<Representation> =>
    svc.replicas === null
      ? compute(ctx).then(toRepresentation)
      : readOn(svc, stationId, (on) => compute(ctx, on), basis).then(toRepresentation);
  // Refresh-ahead (RouteSpec.refreshAhead): the answer computed again from the inputs of the request that
  // computed it — its validated path parameters and query, station and credential — with no request.
  if (route.refreshAhead && (area === undefined || namedIn !== null))
    throw new Error(`route ${route.operationId}: refreshAhead needs cache and the station named in the path`);
  if (route.seeded && (!route.refreshAhead || typeof area !== 'string'))
    throw new Error(`route ${route.operationId}: seeded needs refreshAhead and a cache of one area`);
  const computeDetached = (inputs: DetachedInputs, stationId: string, basis: ReadBasis): Promise<Representation> => {
    const run = async (on: Services) =>
      toRepresentation(
        await route.handler({
          ctx: DETACHED_CTX,
          svc: on,
          params: route.params ? validate(route.params, 'params', { ...inputs.params }) : undefined,
          query: querySchema ? validate(querySchema, 'query', { ...inputs.query }) : undefined,
          body: undefined,
          station: inputs.station,
          credential: inputs.credential,
        } as HandlerArgs<TSchema, TSchema, TSchema>),
      );
    return svc.replicas === null ? run(svc) : readOn(svc, stationId, run, basis);
  };
  const refresher = (ctx: Context, key: string, stationId: string): Refresh => {
    const inputs: DetachedInputs = {
      params: { ...ctx.params },
      query: queryOf(ctx),
      station: ctx.state.station,
      credential: ctx.state.credential,
    };
    const refresh: Refresh = (readAt, seed) => {
      const nowMs = svc.clock.now().getTime();
      svc.reads.recompute(key, stationId, area as ReadAreas, nowMs, (basis) => computeDetached(inputs, stationId, basis), refresh, readAt);
      // After the computation began (a kept answer would hold it back): the seed's answer meanwhile.
      if (seed === undefined || route.seeded === undefined || typeof area !== 'string') return;
      const query = querySchema ? validate(querySchema, 'query', { ...inputs.query }) : undefined;
      const seeded = route.seeded({ svc, station: inputs.station as Station, query, seed } as Parameters<
        NonNullable<typeof route.seeded>
      >[0]);
      if (seeded !== undefined) svc.reads.seed(key, stationId, area, seeded, nowMs, refresh, readAt);
    };
    return refresh;
  };
  const handleCached = (ctx: Context): Promise<void> | void => {
    const stationId = (ctx.state.station as Station).id;
    const key = readKey(route.operationId, stationId, pathInKey ? ctx.path : '', ctx.querystring);
    const answer = svc.reads.read(
      key,
      stationId,
      area as ReadAreas,
      svc.clock.now().getTime(),
      (basis) => computeRead(ctx, stationId, basis),
      route.refreshAhead ? refresher(ctx, key, stationId) : undefined,
    );
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
