import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';

// Outbound HTTP to addresses that others name (webhook endpoints, track art URLs; docs/webhooks.md#safety):
// no loopback, private, link-local or unique-local target, checked after DNS resolution on the very
// addresses the socket connects to (a custom `lookup` in undici's connector, so a rebinding DNS answer
// cannot slip past a check made earlier). `allowInsecure` (WEBHOOKS_ALLOW_INSECURE=1) lifts the
// address rules for development.

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

/** The agent that holds requests to the rules: `timeoutMs` to connect, for the headers and between body chunks. */
export function outboundAgent(allowInsecure: boolean, timeoutMs: number): Agent {
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

/** A failed exchange in a line: a timeout (after `timeoutMs`), a refused address, or the error's code and message. */
export function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown };
  if (
    e?.name === 'TimeoutError' ||
    e?.name === 'AbortError' ||
    e?.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e?.code === 'UND_ERR_BODY_TIMEOUT' ||
    e?.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `timeout: no answer within ${timeoutMs / 1000} s`;
  }
  if (err instanceof RefusedTargetError || e?.cause instanceof RefusedTargetError)
    return `refused: ${(e.cause instanceof RefusedTargetError ? e.cause : e).message}`;
  return `${e?.code ?? e?.name ?? 'error'}: ${e?.message ?? String(err)}`.slice(0, 300);
}

// Fetching a remote file under these rules (track art, docs/now-playing.md#the-checks-worker-queue-artwork):
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

/** GETs `url` with `headers` within `limits`; never throws (every failure is described). */
export async function fetchBounded(url: string, limits: FetchLimits, headers: Record<string, string>): Promise<FetchOutcome> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let target = url;
  try {
    for (let hop = 0; ; hop++) {
      const problem = fetchTargetProblem(target, limits.allowInsecure);
      if (problem) return problem;
      const res = await request(target, {
        method: 'GET',
        headers,
        dispatcher: outboundAgent(limits.allowInsecure, limits.timeoutMs),
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
      return { ok: false, failure: 'forbidden-address', detail: describeFailure(err, limits.timeoutMs) };
    return { ok: false, failure: 'unreachable', detail: describeFailure(err, limits.timeoutMs) };
  }
}
