import type { Context } from 'koa';
import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { httpRequestDuration } from '../lib/metrics.ts';

/**
 * What the envelope reports once a request is answered: its line in the request log and its sample in
 * `waveline_http_request_duration_seconds`. Null when both are switched off, so the envelope then pays
 * nothing at all.
 *
 * Successful (2xx, 304) listener reads log at `debug`, everything else at `info`.
 * The log line carries the request id, method, route template (never the raw path or query string, so
 * no slug-shaped secret, token or grant can leak from a URL), status, duration, bytes and the station id
 * once a gate found it; headers are never logged.
 */
export type RequestObserver = (ctx: Context, requestId: string, startedAt: number) => void;

const LISTENER_PREFIX = '/api/v1/stations/';

/** Route label of a request no route matched (bounded: never the raw path). */
export const UNMATCHED = 'unmatched';
/** Route label of a CORS preflight, which the envelope answers for every path. */
export const PREFLIGHT = 'preflight';

interface Series {
  child: { observe(seconds: number): void } | null;
  /** Whether this request's line is written: successful listener reads log at `debug`, the rest at `info`. */
  logged: boolean;
  level: 'info' | 'debug';
}

export function requestObserver(config: Readonly<Config>, logger: Logger, metrics: boolean): RequestObserver | null {
  const log = config.observability.requestLog && logger.isLevelEnabled('info');
  if (!log && !metrics) return null;
  const debug = logger.isLevelEnabled('debug');
  // One entry per (method, status, route), found again by one Map look-up per request.
  const series = new Map<string, Series>();
  return (ctx, requestId, startedAt) => {
    const seconds = (performance.now() - startedAt) / 1000;
    const res = ctx.res;
    const status = res.statusCode;
    const route = (ctx.state.route as string | undefined) ?? (ctx.method === 'OPTIONS' ? PREFLIGHT : UNMATCHED);
    const method = ctx.method;
    const key = `${method} ${status} ${route}`;
    let entry = series.get(key);
    if (!entry) {
      // A 2xx/304 listener read is the hot path polled by every app: its line costs more CPU than the
      // read itself (docs/operations.md, "The cost of observability"), so it is written at `debug`.
      const quietRead = (method === 'GET' || method === 'HEAD') && route.startsWith(LISTENER_PREFIX) && status < 400;
      entry = {
        child: metrics ? httpRequestDuration.series({ method, route, status: String(status) }) : null,
        logged: log && (debug || !quietRead),
        level: quietRead ? 'debug' : 'info',
      };
      series.set(key, entry);
    }
    entry.child?.observe(seconds);
    if (entry.logged) {
      const bytes = (ctx.state.responseBytes as number | undefined) ?? Number(res.getHeader('content-length') ?? 0);
      logger[entry.level](
        {
          requestId,
          method,
          route,
          status,
          ms: Math.round(seconds * 1e5) / 100,
          bytes,
          stationId: (ctx.state.station as { id?: string } | undefined)?.id,
        },
        'request',
      );
    }
  };
}
