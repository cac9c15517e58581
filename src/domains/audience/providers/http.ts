import { HttpError, getJson } from '../../../lib/httpClient.ts';

// The one way listener counts are fetched: a GET with the weather poller's deadline (10 s, never longer
// than the poll interval allows), a capped body, no redirects followed, and a reason a person can act on when it fails. A
// status document is a few KiB; anything much larger is not one (or a server streaming audio at us).

export class CountUnavailable extends Error {}

export const STATUS_TIMEOUT_MS = 10_000;
export const STATUS_MAX_BYTES = 256 * 1024;

/** GET `url` and parse it as JSON; throws CountUnavailable with the reason (never the URL's credentials). */
export async function getStatusJson(url: string, timeoutMs: number, maxBytes = STATUS_MAX_BYTES): Promise<unknown> {
  const host = safeHost(url);
  let answer;
  try {
    answer = await getJson(url, { headers: { 'user-agent': 'Waveline audience poller' }, timeoutMs, maxBytes });
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    if (err.stage === 'request') throw new CountUnavailable(`${host} could not be reached: ${reason(err.cause)}`);
    if (err.tooLarge) throw new CountUnavailable(`${host} sent more than ${maxBytes} bytes: not a status document`);
    if (err.stage === 'body') throw new CountUnavailable(`${host} did not finish its answer: ${reason(err.cause)}`);
    const kind = /^\s*</.test(err.text ?? '') ? 'HTML or XML' : 'text';
    throw new CountUnavailable(`${host} answered ${kind}, not JSON (is the URL the JSON status document?)`);
  }
  if (answer.status !== 200) throw new CountUnavailable(`${host} answered HTTP ${answer.status}`);
  return answer.json;
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
