import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
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
export interface RequestObserver {
  /** Reports a request Koa answered (its route, station and bytes from `ctx.state`). */
  (ctx: Context, requestId: string, startedAt: number): void;
  /**
   * For answers written before Koa (cachedReads.ts, storedAnswers.ts): the series of one method, status
   * and route, looked up once by the caller and kept, so a request builds no key and no context object.
   */
  series(method: string, status: number, route: string): ObservedSeries;
  /** Reports a request answered before Koa on its series; `bytes` 0 when it sent no body. */
  record(series: ObservedSeries, requestId: string, startedAt: number, bytes: number, stationId: string | undefined): void;
}

const LISTENER_PREFIX = '/api/v1/stations/';

/** Route label of a request no route matched (bounded: never the raw path). */
export const UNMATCHED = 'unmatched';
/** Route label of a CORS preflight, which the envelope answers for every path. */
export const PREFLIGHT = 'preflight';

export interface ObservedSeries {
  readonly method: string;
  readonly status: number;
  readonly route: string;
  readonly child: { observe(seconds: number): void } | null;
  /** Whether this request's line is written: successful listener reads log at `debug`, the rest at `info`. */
  readonly logged: boolean;
  readonly level: 'info' | 'debug';
}

export function requestObserver(config: Readonly<Config>, logger: Logger, metrics: boolean): RequestObserver | null {
  const log = config.observability.requestLog && logger.isLevelEnabled('info');
  if (!log && !metrics) return null;
  const debug = logger.isLevelEnabled('debug');
  // One entry per (method, status, route), found again by one Map look-up per Koa request.
  const known = new Map<string, ObservedSeries>();
  const series = (method: string, status: number, route: string): ObservedSeries => {
    const key = `${method} ${status} ${route}`;
    let entry = known.get(key);
    if (!entry) {
      // A 2xx/304 listener read is the hot path polled by every app: its line costs more CPU than the
      // read itself (docs/operations.md, "The cost of observability"), so it is written at `debug`.
      const quietRead = (method === 'GET' || method === 'HEAD') && route.startsWith(LISTENER_PREFIX) && status < 400;
      entry = {
        method,
        status,
        route,
        child: metrics ? httpRequestDuration.series({ method, route, status: String(status) }) : null,
        logged: log && (debug || !quietRead),
        level: quietRead ? 'debug' : 'info',
      };
      known.set(key, entry);
    }
    return entry;
  };
  const record = (entry: ObservedSeries, requestId: string, startedAt: number, bytes: number, stationId: string | undefined) => {
    const seconds = (performance.now() - startedAt) / 1000;
    entry.child?.observe(seconds);
    if (entry.logged) {
      const { method, route, status } = entry;
      logger[entry.level]({ requestId, method, route, status, ms: Math.round(seconds * 1e5) / 100, bytes, stationId }, 'request');
    }
  };
  const observer = (ctx: Context, requestId: string, startedAt: number) => {
    const res = ctx.res;
    const route = (ctx.state.route as string | undefined) ?? (ctx.method === 'OPTIONS' ? PREFLIGHT : UNMATCHED);
    const entry = series(ctx.method, res.statusCode, route);
    const bytes = entry.logged ? ((ctx.state.responseBytes as number | undefined) ?? Number(res.getHeader('content-length') ?? 0)) : 0;
    record(entry, requestId, startedAt, bytes, (ctx.state.station as { id?: string } | undefined)?.id);
  };
  return Object.assign(observer, { series, record });
}

/**
 * The series of one route answered before Koa, by method and status: each looked up once, then kept by
 * the route (cachedReads.ts, storedAnswers.ts: GET and HEAD only), so reporting a request costs a small-integer look-up.
 */
export class RouteSeries {
  private readonly observe: RequestObserver;
  private readonly route: string;
  private readonly known = new Map<number, ObservedSeries>();
  constructor(observe: RequestObserver, route: string) {
    this.observe = observe;
    this.route = route;
  }

  /** Reports the answer `res` got; `bytes` the body's length, 0 to read it from Content-Length (an error answer). */
  record(res: ServerResponse, requestId: string, startedAt: number, bytes: number, stationId: string | undefined): void {
    const method = res.req.method ?? 'GET';
    const status = res.statusCode;
    const key = method === 'HEAD' ? -status : status;
    let entry = this.known.get(key);
    if (!entry) this.known.set(key, (entry = this.observe.series(method, status, this.route)));
    if (entry.logged && bytes === 0) bytes = Number(res.getHeader('content-length') ?? 0);
    this.observe.record(entry, requestId, startedAt, bytes, stationId);
  }
}
