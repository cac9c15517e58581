import type { Context } from 'koa';
import type { Histogram } from 'prom-client';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { httpRequestDuration } from '../lib/metrics.ts';

/**
 * What the envelope reports once a request is answered: its line in the request log and its sample in
 * `waveline_http_request_duration_seconds`. Null when both are switched off, so the envelope then pays
 * nothing at all.
 *
 * The log line carries the request id, method, route template (never the raw path or query string, so
 * no slug-shaped secret, token or grant can leak from a URL), status, duration, bytes and the station id
 * once a gate found it; headers are never logged.
 */
export type RequestObserver = (ctx: Context, requestId: string, startedAt: number) => void;

/** Route label of a request no route matched (bounded: never the raw path). */
export const UNMATCHED = 'unmatched';
/** Route label of a CORS preflight, which the envelope answers for every path. */
export const PREFLIGHT = 'preflight';

export function requestObserver(config: Readonly<Config>, logger: Logger, metrics: boolean): RequestObserver | null {
  const log = config.observability.requestLog;
  if (!log && !metrics) return null;
  // One labelled child per (route, method, status), found again by one Map look-up per request.
  const children = new Map<string, Histogram.Internal<'method' | 'route' | 'status'>>();
  return (ctx, requestId, startedAt) => {
    const seconds = (performance.now() - startedAt) / 1000;
    const res = ctx.res;
    const status = res.statusCode;
    const route = (ctx.state.route as string | undefined) ?? (ctx.method === 'OPTIONS' ? PREFLIGHT : UNMATCHED);
    const method = ctx.method;
    if (metrics) {
      const key = `${method} ${status} ${route}`;
      let child = children.get(key);
      if (!child) children.set(key, (child = httpRequestDuration.labels(method, route, String(status))));
      child.observe(seconds);
    }
    if (log) {
      const bytes = (ctx.state.responseBytes as number | undefined) ?? Number(res.getHeader('content-length') ?? 0);
      logger.info(
        { requestId, method, route, status, ms: Math.round(seconds * 1e5) / 100, bytes, stationId: (ctx.state.station as { id?: string } | undefined)?.id },
        'request',
      );
    }
  };
}
