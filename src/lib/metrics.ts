import { randomUUID } from 'node:crypto';
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';
import { safeEqual } from './tokens.ts';

// The metrics registry of the process (one per process; docs/operations.md lists every metric), the
// generic metrics (HTTP requests, rate limits, response caches; the process metrics) and the /metrics
// answer. Every other metric is defined by its owner, in its own folder — a feature in
// `domains/<feature>/metrics.ts`, the worker in `workers/metrics.ts`, the gateway in
// `gateway/metrics.ts` — with `counter`, `gauge` and `histogram` below, and listed in
// `src/roles/metrics.ts` so every role's /metrics lists it. `waveline dev` runs the three roles in one
// process and serves them all from one /metrics.
// Labels stay bounded: route templates (never raw paths, slugs or tokens), job and queue names, fixed
// reasons. No Koa, no knex here: the gateway imports this module.

export const registry = new Registry();
let defaultsCollected = false;
let metricsOn = true;

/** At a role's start: metrics on or off for the process (`METRICS`), and the process metrics. */
export function initMetrics(config: { metrics: boolean }): void {
  metricsOn = config.metrics;
  startProcessMetrics(config);
}

/** The default process metrics (CPU, memory, event-loop lag, GC), once per process; every server that serves /metrics asks. */
export function startProcessMetrics(config: { metrics: boolean }): void {
  if (!config.metrics || defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: registry });
}

/** A counter in the process registry (its name unique: a second one of the same name throws). */
export function counter<T extends string>(config: Omit<CounterConfiguration<T>, 'registers'>): Counter<T> {
  return new Counter({ ...config, registers: [registry] });
}

/** A gauge in the process registry. */
export function gauge<T extends string>(config: Omit<GaugeConfiguration<T>, 'registers'>): Gauge<T> {
  return new Gauge({ ...config, registers: [registry] });
}

/** A histogram in the process registry (a path run per request uses `FastHistogram` instead). */
export function histogram<T extends string>(config: Omit<HistogramConfiguration<T>, 'registers'>): Histogram<T> {
  return new Histogram({ ...config, registers: [registry] });
}

// ---- web ----

/**
 * A histogram for the request path: `series(labels)` once per label set, then `observe(seconds)` is a
 * bucket search and three additions. prom-client's own Histogram hashes and validates its labels on
 * every observation (≈ 1 µs, measured: a twentieth of a cached listener read); this one hands the
 * registry the same exposition (`_bucket` with `le`, `_sum`, `_count`) through the metric interface
 * (`get()`) the registry reads at scrape time.
 */
export class FastHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly bounds: number[];
  private readonly all = new Map<string, { labels: Record<string, string>; counts: Float64Array; sum: number; count: number }>();
  constructor(config: { name: string; help: string; buckets: number[]; registers: Registry[] }) {
    this.name = config.name;
    this.help = config.help;
    this.bounds = config.buckets;
    for (const r of config.registers) r.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The series of a label set (the same one for the same labels, whoever asks). */
  series(labels: Record<string, string>): { observe(seconds: number): void } {
    const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
    let entry = this.all.get(key);
    if (!entry) this.all.set(key, (entry = { labels, counts: new Float64Array(this.bounds.length), sum: 0, count: 0 }));
    const series = entry;
    const bounds = this.bounds;
    return {
      observe(seconds: number): void {
        series.sum += seconds;
        series.count++;
        for (let i = 0; i < bounds.length; i++) {
          if (seconds <= bounds[i]) {
            series.counts[i]++;
            return;
          }
        }
      },
    };
  }

  get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const { labels, counts, sum, count } of this.all.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += counts[i];
        values.push({ labels: { ...labels, le: this.bounds[i] }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const entry of this.all.values()) {
      entry.counts.fill(0);
      entry.sum = 0;
      entry.count = 0;
    }
  }
}

export const httpRequestDuration = new FastHistogram({
  name: 'waveline_http_request_duration_seconds',
  help: 'HTTP requests of the web role by method, route template and status; _count is the request count.',
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

export const rateLimitRefusals = counter({
  name: 'waveline_rate_limit_refusals_total',
  help: 'Requests refused with 429 RATE_LIMITED, by limit.',
  labelNames: ['limit'] as const,
});

const cacheLookups = counter({
  name: 'waveline_cache_lookups_total',
  help: 'Response-cache look-ups by cache and result (hit or miss).',
  labelNames: ['cache', 'result'] as const,
  collect: () => {
    for (const { hit, miss } of cacheCounters.values()) {
      hit.flush();
      miss.flush();
    }
  },
});

/** Whether metrics are collected in this process (`METRICS=0` switches them off; see initMetrics). */
export function metricsEnabled(): boolean {
  return metricsOn;
}

const cacheCounters = new Map<string, { hit: Tally; miss: Tally }>();

/**
 * The hook a response cache calls on every look-up: `cacheLookup('nowPlaying', hit)`. `cache` must be a
 * fixed name (never a key). Costs a Map look-up and an addition: the counts reach prom-client when the
 * registry is read (`Tally`; prom-client's `labels(…).inc()` hashes and validates the labels on every call,
 * and every cached listener read counts one hit).
 */
export function cacheLookup(cache: string, hit: boolean): void {
  if (!metricsOn) return;
  let counters = cacheCounters.get(cache);
  if (!counters) {
    counters = { hit: new Tally(cacheLookups.labels(cache, 'hit')), miss: new Tally(cacheLookups.labels(cache, 'miss')) };
    cacheCounters.set(cache, counters);
  }
  (hit ? counters.hit : counters.miss).inc();
}

// ---- tallies ----

/**
 * A series of a labelled counter or gauge that adds up in a plain number and hands the sum to prom-client
 * when the registry is read (its metric's `collect` flushes it). prom-client's `labels(…).inc()` hashes and
 * checks its labels on every call, and the gateway counts per connection and per frame (a reconnect storm:
 * tens of thousands a second), the read cache per cached read.
 */
export interface Series {
  inc(value: number): void;
  dec?(value: number): void;
}

export class Tally {
  private delta = 0;
  private readonly series: Series;
  constructor(series: Series) {
    this.series = series;
  }
  inc(value = 1): void {
    this.delta += value;
  }
  dec(value = 1): void {
    this.delta -= value;
  }
  /** Lists the series at 0 before anything is counted. */
  show(): void {
    this.series.inc(0);
  }
  flush(): void {
    const delta = this.delta;
    this.delta = 0;
    if (delta > 0) this.series.inc(delta);
    else if (delta < 0) this.series.dec?.(-delta);
  }
}

// ---- serving ----

export interface MetricsAnswer {
  status: number;
  contentType: string;
  body: string;
  /** Set on 401: the challenge to send. */
  wwwAuthenticate?: string;
}

const json = 'application/json; charset=utf-8';

/**
 * The answer to `GET /metrics` for any role: Prometheus text, or the error body of docs/errors.md#error-codes
 * when metrics are off (404) or `METRICS_TOKEN` is set and the request does not carry it (401).
 */
export async function metricsAnswer(
  authorization: string | undefined,
  config: { metrics: boolean; metricsToken: string },
): Promise<MetricsAnswer> {
  const token = config.metricsToken;
  if (!config.metrics) return { status: 404, contentType: json, body: errorBody('NOT_FOUND', 'Metrics are switched off (METRICS=0).') };
  if (token) {
    const match = /^Bearer (\S+)$/.exec(authorization ?? '');
    if (!match || !safeEqual(match[1], token)) {
      return {
        status: 401,
        contentType: json,
        body: errorBody('UNAUTHENTICATED', 'A valid metrics token is needed.'),
        wwwAuthenticate: 'Bearer',
      };
    }
  }
  return { status: 200, contentType: registry.contentType, body: await registry.metrics() };
}

function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message, requestId: randomUUID() } });
}
