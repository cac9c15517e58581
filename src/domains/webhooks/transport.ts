import { isIP } from 'node:net';
import { request } from 'undici';
import { describeFailure, isForbiddenAddress, outboundAgent } from '../../lib/boundedFetch.ts';

// The HTTP side of a delivery (docs/webhooks.md#safety): https only; no loopback, private,
// link-local or unique-local target, checked after DNS resolution on the very addresses the socket
// connects to (lib/boundedFetch.ts); redirects are never followed (undici's `request` does not follow
// them); at most 5 s for the whole exchange; at most 1 KiB of the response body kept.
// `allowInsecure` (WEBHOOKS_ALLOW_INSECURE=1) lifts the scheme and address rules for development.

export const DELIVERY_TIMEOUT_MS = 5000;
export const MAX_RESPONSE_BYTES = 1024;

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
  // Names are judged by what they resolve to, at delivery (lib/boundedFetch.ts, `safeLookup`).
  if (!allowInsecure && isIP(host) && isForbiddenAddress(host)) {
    return 'url must not point at a loopback, private, link-local or unique-local address';
  }
  return null;
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
      dispatcher: outboundAgent(allowInsecure, DELIVERY_TIMEOUT_MS),
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
    return { ok: false, httpStatus: null, durationMs: took(), error: describeFailure(err, DELIVERY_TIMEOUT_MS), responseBody: null };
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
