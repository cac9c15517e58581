import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { DatabaseUnavailableError, isDatabaseUnreachable, WavelineError } from '../lib/errors.ts';
import { cacheLookup } from '../lib/metrics.ts';
import { areasLabel, graphqlKey, readKey, UnkeptAnswer, type ReadAreas, type Representation } from '../lib/readCache.ts';
import { hashToken, TOKEN_LENGTH } from '../lib/tokens.ts';
import { RouteTable } from './dispatch.ts';
import { requestIdOf, writeErrorResponse } from './envelope.ts';
import { writeBytes, writeCacheable, writeUnkept } from './etag.ts';
import { headerIssue, targetIssue } from './hostile.ts';
import { RouteSeries, type RequestObserver } from './observe.ts';
import type { LimitName } from './ratelimit.ts';
import { keyHoldsPath } from './route.ts';
import type { RouteSpec } from './routeSpec.ts';
import { admits, slugShaped } from './gates.ts';
import { isPublic, type FrameworkServices, type RouteScope } from './subjects.ts';

// Listener reads whose answer is already in the read cache, answered before Koa: apps poll these
// reads, and on the 2-core machine building Koa's context, request and response objects for each of
// them cost a third of the throughput (docs/benchmarks.md#cached-reads-before-koa).
//
// GraphQL queries over GET are taken the same way when graphql/serve.ts kept their whole response
// (`graphqlKey`: the Accept and Content-Type it was negotiated with and the raw query string).
//
// Only a request that would certainly get the stored answer is taken: a GET or HEAD of a cached listener
// route, no hostile byte, the station and the credential already in memory and admitted, the module
// on, and the answer stored and still exact. Anything else — a gate that would refuse or must ask the
// database, a miss — goes to Koa untouched, which then runs the whole route as before; so every refusal
// keeps its one writer (the envelope) and the gate order (docs/errors.md#gate-order). The one answer this path
// writes besides the stored bytes is a refused rate limit (the token is taken here, so the request is
// ours from then on), in the envelope's body and headers.

const LISTENER_PREFIX = '/api/v1/stations/';
const BEARER_PREFIX = 'Bearer ';
const BEARER_LENGTH = BEARER_PREFIX.length + TOKEN_LENGTH;

interface CachedRead {
  /** The route template: the metrics and request-log label. */
  path: string;
  operationId: string;
  /** The metrics label of the look-up: the read's area(s), or `graphql`. */
  area: string;
  /** A GraphQL query over GET: its whole response, kept by graphql/serve.ts under `graphqlKey`. */
  graphql: boolean;
  scope: RouteScope;
  module?: string;
  rateLimit?: LimitName;
  /** The areas its answer shows (REST reads; undefined for GraphQL, whose answers name theirs when stored). */
  areas?: ReadAreas;
  /** Whether the key holds the path (a route with parameters besides the station). */
  pathInKey: boolean;
  /** Its request-duration series and log level, by method and status (null when observability is off). */
  series: RouteSeries | null;
}

/**
 * A request target already resolved: its read, slug, path and query, and its key for the station it named
 * last (and, for GraphQL, the Accept and Content-Type the key was built with).
 */
interface Target {
  read: CachedRead;
  slug: string;
  path: string;
  query: string;
  stationId: string;
  key: string;
  accept: string;
  contentType: string;
}

/** How many request targets are kept resolved (one per polled URL: station × read × query). */
const MAX_TARGETS = 4096;

/** Answers the request and returns true, or returns false and leaves it to Koa. */
export type CachedReads = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * `fallback` answers a request this path took but could not answer after all (a joined computation that
 * failed): the route (Koa), which then answers as if this path had never seen it.
 */
export function cachedReads(
  svc: FrameworkServices,
  routes: readonly RouteSpec[],
  observe: RequestObserver | null,
  fallback: (req: IncomingMessage, res: ServerResponse) => void,
): CachedReads {
  const table = new RouteTable<CachedRead>();
  for (const route of routes) {
    if (route.method !== 'get' || route.station !== 'slug' || !route.scope) continue;
    const rest = route.surface === 'listener' && route.cache !== undefined && !route.page;
    const graphql = route.surface === 'graphql';
    if (!rest && !graphql) continue;
    table.add('get', route.path, {
      path: route.path,
      operationId: route.operationId,
      area: route.cache !== undefined ? areasLabel(route.cache) : 'graphql',
      areas: graphql ? undefined : route.cache,
      graphql,
      scope: route.scope,
      module: route.module,
      rateLimit: route.rateLimit,
      pathInKey: keyHoldsPath(route.path),
      series: observe ? new RouteSeries(observe, route.path) : null,
    });
  }

  // What a request target resolves to (its route, slug and read-cache key), kept by the exact target so
  // an app polling the same URL skips the target check, the route match and the key's building (with
  // the two strings and the two objects they make) from its second read on. Only targets that matched
  // a cached route and passed the target check are kept; bounded (cleared when full), since targets are
  // the client's to choose. The key holds the station's id: it is used while the slug names that station.
  const targets = new Map<string, Target>();

  return (req, res) => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    let target = targets.get(url);
    if (target === undefined) {
      if (!url.startsWith(LISTENER_PREFIX) || targetIssue(url) !== null) return false;
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const found = table.match(method, path);
      if (!found || !slugShaped(found.params.stationSlug)) return false;
      target = {
        read: found.handler,
        slug: found.params.stationSlug,
        path,
        query: q < 0 ? '' : url.slice(q + 1),
        stationId: '',
        key: '',
        accept: '',
        contentType: '',
      };
      if (targets.size >= MAX_TARGETS) targets.clear();
      targets.set(url, target);
    }
    if (headerIssue(req.rawHeaders) !== null) return false;
    const read = target.read;
    // Wall-clock time, read once for the three in-memory caches' ages below (each would read it again).
    const realMs = Date.now();
    const station = svc.stations.peekBySlug(target.slug, realMs);
    if (!station || !isPublic(station)) return false;
    const nowMs = svc.clock.nowMs();
    // The credential gate's checks, on the cached credential only (an uncached token goes to Koa).
    // `Bearer ` and a token of the length every token has, taken without the gate's regular expression
    // (bearerOf): a token that holds whitespace, which the gate refuses, matches no stored hash either,
    // since every stored token was generated in base62 — so it goes to Koa and its 401.
    const authorization = req.headers.authorization;
    if (authorization === undefined || authorization.length !== BEARER_LENGTH || !authorization.startsWith(BEARER_PREFIX)) return false;
    // Hashed on every read, never remembered by the raw token: a lookup keyed by the token itself would
    // keep callers' secrets in memory and compare them by a string map, not in constant time (and any
    // keyed hash a memo could be looked up by costs what this SHA-256 costs: docs/benchmarks.md#where-the-rest-goes).
    const credential = svc.credentials.peek(hashToken(authorization.slice(BEARER_PREFIX.length)), realMs);
    if (!admits(credential, read.scope, station.id, nowMs)) return false;
    if (read.module !== undefined && !(station.modules as Readonly<Record<string, boolean>>)[read.module]) return false;
    let key: string;
    if (read.graphql) {
      // GraphiQL (a browser asking for HTML) and HEAD are Koa's; a stored answer was negotiated with this very Accept.
      const accept = req.headers.accept ?? '';
      if (method !== 'GET' || accept.includes('text/html')) return false;
      // Built again only when the station or either header differs from the last request of this target:
      // an app sends the same headers on every poll, and the key holds the whole query string.
      const contentType = req.headers['content-type'] ?? '';
      if (target.stationId !== station.id || target.accept !== accept || target.contentType !== contentType) {
        target.key = graphqlKey('GET', station.id, accept, contentType, target.query);
        target.stationId = station.id;
        target.accept = accept;
        target.contentType = contentType;
      }
      key = target.key;
    } else {
      if (target.stationId !== station.id) {
        target.key = readKey(read.operationId, station.id, read.pathInKey ? target.path : '', target.query);
        target.stationId = station.id;
      }
      key = target.key;
    }
    const rep = svc.reads.peek(key, nowMs, realMs);
    // Not stored: when its computation is already running (the answer of the moment before has just
    // expired — now-playing's every second — or passed its safety age), this request waits for it here,
    // its gates already passed, instead of running the whole route only to join it there
    // (docs/benchmarks.md#caches-that-reload-before-they-expire); a GraphQL query waits for the
    // same query's run (graphql/serve.ts), which no write has overtaken.
    const running = rep === undefined ? svc.reads.running(key, station.id, read.areas) : undefined;
    if (rep === undefined && running === undefined) return false;

    // From here the request is answered here. No closure or object is made for a stored answer unless a
    // rate limit makes it wait (docs/benchmarks.md#nothing-made-per-stored-answer).
    const startedAt = read.series ? performance.now() : 0;
    const requestId = requestIdOf(req);
    svc.credentials.touch(credential, nowMs);
    cacheLookup(read.area, rep !== undefined);
    const limit = read.rateLimit;
    const limited = limit !== undefined && svc.rateLimits.enabled(limit);
    if (rep !== undefined && !limited) {
      const bytes = read.graphql
        ? writeBytes(res, requestId, rep.bytes, rep.contentType)
        : writeCacheable(req, res, requestId, rep.bytes, rep.contentType, rep.etag);
      read.series?.record(res, requestId, startedAt, bytes, station.id);
      return true;
    }
    const report = (bytes: number) => read.series?.record(res, requestId, startedAt, bytes, station.id);
    const write = (answer: Representation) =>
      report(
        read.graphql
          ? writeBytes(res, requestId, answer.bytes, answer.contentType)
          : writeCacheable(req, res, requestId, answer.bytes, answer.contentType, answer.etag),
      );
    // The computation joined may answer for a moment already past (it ran longer than its answer stays
    // exact), or fail: the route then runs as if this path had not taken the request — except when the
    // failure is Postgres being unreachable, or a GraphQL run's error answer, which this request answers
    // as it is, at once, as the requests that joined the computation inside the route do.
    const send =
      rep !== undefined
        ? () => write(rep)
        : () =>
            void running!.then(
              (answer) => (answer.validUntil > nowMs ? write(answer) : fallback(req, res)),
              (err: unknown) => {
                if (err instanceof UnkeptAnswer) report(writeUnkept(res, requestId, err));
                else if (isDatabaseUnreachable(err) || err instanceof DatabaseUnavailableError) {
                  writeErrorResponse(res, err instanceof DatabaseUnavailableError ? err : new DatabaseUnavailableError(), requestId);
                  report(0);
                } else fallback(req, res);
              },
            );
    if (limited) takeThenSend(svc, res, { limit, key: credential.id, requestId, path: read.path }, send, report);
    else send();
    return true;
  };
}

/**
 * Sends an answer taken before Koa (here, storedAnswers.ts) once its rate limit let it through: the token
 * is taken here, so a refusal is written here too, in the envelope's body and headers.
 */
export function takeThenSend(
  svc: FrameworkServices,
  res: ServerResponse,
  taken: { limit: LimitName; key: string; requestId: string; path: string },
  send: () => void,
  report: (bytes: number) => void,
): void {
  const { limit, key, requestId, path } = taken;
  svc.rateLimits.take({ set: (field, value) => res.setHeader(field, value) }, limit, key).then(send, (err: unknown) => {
    if (!(err instanceof WavelineError)) svc.logger.error({ err, requestId, method: res.req.method, path }, 'unhandled error');
    writeErrorResponse(res, err, requestId);
    report(0);
  });
}
