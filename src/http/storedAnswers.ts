import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { forwardedClient } from '../lib/clientIp.ts';
import { RouteTable } from './dispatch.ts';
import { takeThenSend } from './cachedReads.ts';
import { requestIdOf } from './envelope.ts';
import { writeCacheable } from './etag.ts';
import { headerIssue, targetIssue } from './hostile.ts';
import { RouteSeries, type RequestObserver } from './observe.ts';
import type { RouteSpec } from './routeSpec.ts';
import type { FrameworkServices, RouteServices } from './subjects.ts';

// Anonymous GETs whose answer a domain already keeps as bytes (`RouteSpec.stored`: the RadioDNS SPI
// documents that receivers poll), answered before Koa like the listener reads of cachedReads.ts. Only a
// request that would certainly get the stored answer is taken: a GET or HEAD, no hostile byte, a route
// with `stored` that has the answer. Its per-IP rate limit is taken here (the same bucket the route's
// gate takes from); a refusal is written in the envelope's body and headers. Anything else goes to Koa.

export type StoredAnswers = (req: IncomingMessage, res: ServerResponse) => boolean;

export function storedAnswers(svc: FrameworkServices, routes: readonly RouteSpec[], observe: RequestObserver | null): StoredAnswers {
  const table = new RouteTable<{ route: RouteSpec; series: RouteSeries | null }>();
  const prefixes = new Set<string>();
  for (const route of routes) {
    if (route.method !== 'get' || !route.stored || route.scope || route.station) continue;
    table.add('get', route.path, { route, series: observe ? new RouteSeries(observe, route.path) : null });
    prefixes.add(route.path.slice(0, route.path.indexOf('/', 1) + 1));
  }
  const hops = svc.config.trustedProxyHops;

  return (req, res) => {
    if (prefixes.size === 0) return false;
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    let ours = false;
    for (const prefix of prefixes) if (url.startsWith(prefix)) ours = true;
    if (!ours || targetIssue(url) !== null || headerIssue(req.rawHeaders) !== null) return false;
    const q = url.indexOf('?');
    const found = table.match(method, q < 0 ? url : url.slice(0, q));
    if (!found) return false;
    const { route, series } = found.handler;
    const answer = route.stored!(found.params, req, svc as unknown as RouteServices);
    if (answer === undefined) return false;

    const startedAt = series ? performance.now() : 0;
    const requestId = requestIdOf(req);
    const { bytes, contentType, etag } = answer.rep;
    const limit = route.rateLimit;
    if (limit === undefined || !svc.rateLimits.enabled(limit)) {
      series?.record(
        res,
        requestId,
        startedAt,
        writeCacheable(req, res, requestId, bytes, contentType, etag, answer.cacheControl),
        undefined,
      );
      return true;
    }
    const report = (sent: number) => series?.record(res, requestId, startedAt, sent, undefined);
    const send = () => report(writeCacheable(req, res, requestId, bytes, contentType, etag, answer.cacheControl));
    // The per-IP bucket of the route's gate: the client as Koa's `ctx.ip` reads it (Node joins repeated
    // X-Forwarded-For headers into one string).
    const ip = forwardedClient(req.headers['x-forwarded-for'] as string | undefined, hops) ?? req.socket.remoteAddress ?? '';
    takeThenSend(svc, res, { limit, key: `ip:${ip}`, requestId, path: route.path }, send, report);
    return true;
  };
}
