import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { WavelineError } from '../lib/errors.ts';
import { RouteTable } from './dispatch.ts';
import { requestIdOf, writeErrorResponse } from './envelope.ts';
import { writeCacheable } from './etag.ts';
import { headerIssue, targetIssue } from './hostile.ts';
import type { RequestObserver } from './observe.ts';
import type { RouteSpec } from './route.ts';
import type { FrameworkServices, RouteServices } from './subjects.ts';

// Anonymous GETs whose answer a domain already keeps as bytes (`RouteSpec.stored`: the RadioDNS SPI
// documents that receivers poll), answered before Koa like the listener reads of cachedReads.ts. Only a
// request that would certainly get the stored answer is taken: a GET or HEAD, no hostile byte, a route
// with `stored` that has the answer. Its per-IP rate limit is taken here (the same bucket the route's
// gate takes from); a refusal is written in the envelope's body and headers. Anything else goes to Koa.

export type StoredAnswers = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The client address as Koa's `ctx.ip` reads it: trusted proxies' X-Forwarded-For entries from the right, else the socket. */
function clientIp(req: IncomingMessage, hops: number): string {
  if (hops > 0) {
    const forwarded = req.headers['x-forwarded-for'];
    if (typeof forwarded === 'string' && forwarded) {
      const ips = forwarded.split(/\s*,\s*/).slice(-hops);
      if (ips[0]) return ips[0];
    }
  }
  return req.socket.remoteAddress ?? '';
}

export function storedAnswers(svc: FrameworkServices, routes: readonly RouteSpec[], observe: RequestObserver | null): StoredAnswers {
  const table = new RouteTable<RouteSpec>();
  const prefixes = new Set<string>();
  for (const route of routes) {
    if (route.method !== 'get' || !route.stored || route.scope || route.station) continue;
    table.add('get', route.path, route);
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
    const route = found.handler;
    const answer = route.stored!(found.params, req, svc as unknown as RouteServices);
    if (answer === undefined) return false;

    const startedAt = observe ? performance.now() : 0;
    const requestId = requestIdOf(req);
    const report = (bytes: number) => observe?.(observed(res, route.path, bytes), requestId, startedAt);
    const send = () =>
      report(writeCacheable(req, res, requestId, answer.rep.bytes, answer.rep.contentType, answer.rep.etag, answer.cacheControl));
    if (route.rateLimit === undefined || !svc.rateLimits.enabled(route.rateLimit)) {
      send();
      return true;
    }
    svc.rateLimits
      .take({ set: (field, value) => res.setHeader(field, value) }, route.rateLimit, `ip:${clientIp(req, hops)}`)
      .then(send, (err: unknown) => {
        if (!(err instanceof WavelineError)) svc.logger.error({ err, requestId, method, path: route.path }, 'unhandled error');
        writeErrorResponse(res, err, requestId);
        report(0);
      });
    return true;
  };
}

/** What the request observer reads of a Koa context, for a request answered here. */
function observed(res: ServerResponse, route: string, bytes: number): Context {
  return { res, method: res.req.method, state: { route, responseBytes: bytes > 0 ? bytes : undefined } } as unknown as Context;
}
