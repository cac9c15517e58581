import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';

// The HTTP side of a delivery (decisions.md, "Webhooks", Safety): https only; no loopback, private,
// link-local or unique-local target, checked after DNS resolution on the very addresses the socket
// connects to (a custom `lookup` in undici's connector, so a rebinding DNS answer cannot slip past a
// check made earlier); redirects are never followed (undici's `request` does not follow them); at most
// 5 s for the whole exchange; at most 1 KiB of the response body kept.
// `allowInsecure` (WEBHOOKS_ALLOW_INSECURE=1) lifts the scheme and address rules for development.

export const DELIVERY_TIMEOUT_MS = 5000;
export const MAX_RESPONSE_BYTES = 1024;

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['100::', 64],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** True for an address a webhook may never reach: loopback, private, link-local, unique-local, multicast, unspecified. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  // IPv4-mapped IPv6 (::ffff:a.b.c.d or ::ffff:xxxx:xxxx) is judged by the IPv4 address inside.
  const mapped = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (mapped) {
    if (mapped[1]) return blocked.check(mapped[1], 'ipv4');
    const hi = parseInt(mapped[2], 16);
    const lo = parseInt(mapped[3], 16);
    return blocked.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
  }
  return blocked.check(address, 'ipv6');
}

export class RefusedTargetError extends Error {}

/** Why a webhook URL may not be used (null when it may): the scheme, and an address literal. */
export function urlProblem(raw: string, allowInsecure: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) return 'url must use https://';
  if (url.username || url.password) return 'url must not carry credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // Names are judged by what they resolve to, at delivery (`safeLookup`).
  if (!allowInsecure && isIP(host) && isForbiddenAddress(host)) {
    return 'url must not point at a loopback, private, link-local or unique-local address';
  }
  return null;
}

/** A `lookup` that refuses every answer containing a forbidden address. */
const safeLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad || addresses.length === 0) {
      return callback(new RefusedTargetError(`${hostname} resolves to a forbidden address (${bad?.address ?? 'none'})`), '', 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};

const agents = new Map<string, Agent>();
function agentFor(allowInsecure: boolean, timeoutMs = DELIVERY_TIMEOUT_MS): Agent {
  const key = `${allowInsecure}:${timeoutMs}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({
      connect: allowInsecure ? { timeout: timeoutMs } : { timeout: timeoutMs, lookup: safeLookup },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      // Many endpoints, each with a few sockets kept warm.
      connections: 32,
      keepAliveTimeout: 10_000,
    });
    agents.set(key, agent);
  }
  return agent;
}

export interface AttemptResult {
  ok: boolean;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
}

/** POSTs one signed delivery; never throws (every failure is described in the result). */
export async function postDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  allowInsecure: boolean,
): Promise<AttemptResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const problem = urlProblem(url, allowInsecure);
  if (problem) return { ok: false, httpStatus: null, durationMs: 0, error: `refused: ${problem}`, responseBody: null };
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Waveline-Webhooks/1', ...headers },
      body,
      dispatcher: agentFor(allowInsecure),
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    const responseBody = await readSome(res.body);
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    let error: string | null = null;
    if (!ok) {
      const location = res.headers.location;
      error =
        res.statusCode >= 300 && res.statusCode < 400
          ? `redirect not followed (${res.statusCode}${location ? ` to ${String(location)}` : ''})`
          : `HTTP ${res.statusCode}`;
    }
    return { ok, httpStatus: res.statusCode, durationMs: took(), error, responseBody };
  } catch (err) {
    return { ok: false, httpStatus: null, durationMs: took(), error: describe(err), responseBody: null };
  }
}

async function readSome(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_RESPONSE_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8');
}

function describe(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown };
  if (
    e?.name === 'TimeoutError' ||
    e?.name === 'AbortError' ||
    e?.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e?.code === 'UND_ERR_BODY_TIMEOUT' ||
    e?.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `timeout: no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
  }
  if (err instanceof RefusedTargetError || e?.cause instanceof RefusedTargetError)
    return `refused: ${(e.cause instanceof RefusedTargetError ? e.cause : e).message}`;
  return `${e?.code ?? e?.name ?? 'error'}: ${e?.message ?? String(err)}`.slice(0, 300);
}

// Fetching a remote file under the same rules (artwork checks, decisions.md "Artwork you can trust"):
// http or https, the address rules after DNS, a byte cap enforced while reading (the rest is never
// read), one deadline for the whole exchange, and at most `maxRedirects` redirects, each target
// judged again.

export interface FetchLimits {
  allowInsecure: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export type FetchOutcome =
  | { ok: true; bytes: Buffer; url: string; contentType: string | null }
  | { ok: false; failure: 'unreachable' | 'forbidden-address' | 'too-large'; detail: string };

function fetchTargetProblem(raw: string, allowInsecure: boolean): FetchOutcome | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, failure: 'unreachable', detail: 'not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, failure: 'unreachable', detail: 'not http(s)' };
  if (url.username || url.password) return { ok: false, failure: 'unreachable', detail: 'URL carries credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowInsecure && isIP(host) && isForbiddenAddress(host)) return { ok: false, failure: 'forbidden-address', detail: host };
  return null;
}

/** Drops a response body unread (the error destroying it raises is expected, not reported). */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => {});
  body.destroy();
}

/** GETs `url` within `limits`; never throws (every failure is described). */
export async function fetchBounded(url: string, limits: FetchLimits): Promise<FetchOutcome> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let target = url;
  try {
    for (let hop = 0; ; hop++) {
      const problem = fetchTargetProblem(target, limits.allowInsecure);
      if (problem) return problem;
      const res = await request(target, {
        method: 'GET',
        headers: { accept: 'image/avif,image/webp,image/png,image/jpeg;q=0.9,*/*;q=0.1', 'user-agent': 'Waveline-Artwork/1' },
        dispatcher: agentFor(limits.allowInsecure, limits.timeoutMs),
        signal,
      });
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        discard(res.body);
        if (hop >= limits.maxRedirects) return { ok: false, failure: 'unreachable', detail: `more than ${limits.maxRedirects} redirects` };
        target = new URL(String(res.headers.location), target).toString();
        continue;
      }
      if (res.statusCode !== 200) {
        discard(res.body);
        return { ok: false, failure: 'unreachable', detail: `HTTP ${res.statusCode}` };
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        discard(res.body);
        return { ok: false, failure: 'too-large', detail: `declares ${declared} bytes` };
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > limits.maxBytes) {
          discard(res.body);
          return { ok: false, failure: 'too-large', detail: `more than ${limits.maxBytes} bytes` };
        }
        chunks.push(chunk);
      }
      const type = res.headers['content-type'];
      return { ok: true, bytes: Buffer.concat(chunks, size), url: target, contentType: typeof type === 'string' ? type : null };
    }
  } catch (err) {
    const e = err as { cause?: unknown };
    if (err instanceof RefusedTargetError || e?.cause instanceof RefusedTargetError)
      return { ok: false, failure: 'forbidden-address', detail: describe(err) };
    return { ok: false, failure: 'unreachable', detail: describe(err) };
  }
}
