import { Pool, type Dispatcher } from 'undici';

// HTTP/1.1 keep-alive pools for FCM and Expo (and FCM's token endpoint), one per origin per process.

const pools = new Map<string, Pool>();

function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
    pools.set(origin, pool);
  }
  return pool;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Errors that mean the request never left: safe to send again. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
export const neverSent = (err: unknown): boolean => NOT_SENT.has((err as { code?: string })?.code ?? '');

/** One request with a deadline for headers and body; throws on network errors and timeouts. */
export async function httpRequest(
  url: string,
  options: { method: 'POST'; headers: Record<string, string>; body: string; timeoutMs: number },
): Promise<HttpAnswer> {
  const target = new URL(url);
  const res: Dispatcher.ResponseData = await poolFor(target.origin).request({
    path: target.pathname + target.search,
    method: options.method,
    headers: options.headers,
    body: options.body,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

export async function closeHttpPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.close().catch(() => undefined)));
}
