import { Agent, Pool, interceptors, request, type Dispatcher } from 'undici';

// The one client of the JSON APIs Waveline calls (track catalogues, weather and traffic providers,
// stream status documents, push providers): a request with deadlines, its body read up to a byte cap
// (the rest is never read), and a failure that says how far the exchange got. Fetching what a station
// names, under the outbound address rules, is lib/boundedFetch.ts.

export interface HttpOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** At most this long for the answer's headers and for each wait on its body; unless `pooled`, for the whole exchange too. */
  timeoutMs: number;
  /** The most body bytes read: a longer body fails (`HttpError.tooLarge`). */
  maxBytes?: number;
  /** Redirects followed (none unless asked). */
  maxRedirects?: number;
  /**
   * Through a keep-alive pool of the URL's origin: for bursts of requests to one host (the push
   * providers). Deadlines per phase only: a timer per request would cost at that rate.
   */
  pooled?: boolean;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export type JsonAnswer = { status: 200; json: unknown } | { status: number; json?: undefined };

/**
 * No usable answer. `stage`: `request` when none came (refused, unknown host, no headers in time),
 * `body` when its body broke off, timed out or ran past `maxBytes` (`tooLarge`), `json` when a 200's
 * body is not JSON (`text` holds it). `cause` is the underlying error, `code` its code (ECONNREFUSED,
 * UND_ERR_HEADERS_TIMEOUT, …).
 */
export class HttpError extends Error {
  readonly stage: 'request' | 'body' | 'json';
  readonly code: string | undefined;
  readonly tooLarge: boolean;
  readonly text: string | undefined;
  constructor(stage: HttpError['stage'], message: string, details: { cause?: unknown; tooLarge?: boolean; text?: string } = {}) {
    super(message, { cause: details.cause });
    this.stage = stage;
    this.code = (details.cause as { code?: string } | undefined)?.code;
    this.tooLarge = details.tooLarge ?? false;
    this.text = details.text;
  }
}

/** Errors that mean the request never left: safe to send again. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
export const neverSent = (err: unknown): boolean => NOT_SENT.has((err as { code?: string })?.code ?? '');

const pools = new Map<string, Pool>();

function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
    pools.set(origin, pool);
  }
  return pool;
}

const redirecting = new Map<number, Dispatcher>();

function dispatcherFor(maxRedirects: number): Dispatcher | undefined {
  if (maxRedirects === 0) return undefined;
  let dispatcher = redirecting.get(maxRedirects);
  if (!dispatcher) {
    dispatcher = new Agent().compose(interceptors.redirect({ maxRedirections: maxRedirects }));
    redirecting.set(maxRedirects, dispatcher);
  }
  return dispatcher;
}

async function send(url: string, options: HttpOptions): Promise<Dispatcher.ResponseData> {
  const { method = 'GET', headers, body, timeoutMs } = options;
  try {
    if (options.pooled) {
      const target = new URL(url);
      return await poolFor(target.origin).request({
        path: target.pathname + target.search,
        method,
        headers,
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    }
    return await request(url, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      dispatcher: dispatcherFor(options.maxRedirects ?? 0),
    });
  } catch (err) {
    throw new HttpError('request', (err as Error).message, { cause: err });
  }
}

async function readText(body: Dispatcher.ResponseData['body'], maxBytes: number | undefined): Promise<string> {
  try {
    if (maxBytes === undefined) return await body.text();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        throw new HttpError('body', `more than ${maxBytes} bytes`, { tooLarge: true });
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError('body', (err as Error).message, { cause: err });
  }
}

/** One exchange: the answer with its body as text, whatever its status. Throws HttpError. */
export async function httpRequest(url: string, options: HttpOptions): Promise<HttpAnswer> {
  const res = await send(url, options);
  return { status: res.statusCode, headers: res.headers, text: await readText(res.body, options.maxBytes) };
}

/**
 * GETs `url` as JSON: the parsed body of a 200 answer; any other status comes back alone, its body
 * drained unread. Throws HttpError.
 */
export async function getJson(url: string, options: Omit<HttpOptions, 'method' | 'body' | 'pooled'>): Promise<JsonAnswer> {
  const res = await send(url, { ...options, headers: { accept: 'application/json', ...options.headers } });
  if (res.statusCode !== 200) {
    await res.body.dump().catch(() => undefined);
    return { status: res.statusCode };
  }
  const text = await readText(res.body, options.maxBytes);
  try {
    return { status: 200, json: JSON.parse(text) };
  } catch (err) {
    throw new HttpError('json', (err as Error).message, { cause: err, text });
  }
}
