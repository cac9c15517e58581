import { request } from 'undici';

// The one way listener counts are fetched: a GET with the weather poller's deadline (10 s, never longer
// than the poll interval allows), a capped body, no redirects followed (undici's `request` never does), and a reason a person can act on when it fails. A
// status document is a few KiB; anything much larger is not one (or a server streaming audio at us).

export class CountUnavailable extends Error {}

export const STATUS_TIMEOUT_MS = 10_000;
export const STATUS_MAX_BYTES = 256 * 1024;

/** GET `url` and parse it as JSON; throws CountUnavailable with the reason (never the URL's credentials). */
export async function getStatusJson(url: string, timeoutMs: number, maxBytes = STATUS_MAX_BYTES): Promise<unknown> {
  const host = safeHost(url);
  let res;
  try {
    res = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'Waveline audience poller' },
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (err) {
    throw new CountUnavailable(`${host} could not be reached: ${reason(err)}`);
  }
  if (res.statusCode !== 200) {
    await res.body.dump().catch(() => undefined);
    throw new CountUnavailable(`${host} answered HTTP ${res.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        res.body.destroy();
        throw new CountUnavailable(`${host} sent more than ${maxBytes} bytes: not a status document`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof CountUnavailable) throw err;
    throw new CountUnavailable(`${host} did not finish its answer: ${reason(err)}`);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    const kind = /^\s*</.test(text) ? 'HTML or XML' : 'text';
    throw new CountUnavailable(`${host} answered ${kind}, not JSON (is the URL the JSON status document?)`);
  }
}

function reason(err: unknown): string {
  const e = err as Error & { code?: string };
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') return 'timed out';
  return e.code ?? e.name ?? 'error';
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the status URL';
  }
}
