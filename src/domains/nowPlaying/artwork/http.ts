import { request } from 'undici';

// The one way artwork providers are called: a GET with a deadline, JSON out, and a clear line between
// "the catalogue has nothing" (null) and "the catalogue did not answer properly" (thrown).

export class ProviderError extends Error {}

/**
 * `Application/version ( contact )`, the form MusicBrainz asks every client to send
 * (https://musicbrainz.org/doc/MusicBrainz_API/Rate_Limiting#Provide_meaningful_User-Agent_strings).
 */
export const userAgent = (contact: string): string => `Waveline/0.1 ( ${contact} )`;

/** GET `url` as JSON; null for 404; throws ProviderError on timeout, other statuses or a non-JSON body. */
export async function getJson(url: string, timeoutMs: number, agent: string): Promise<unknown | null> {
  let res;
  try {
    res = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': agent },
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (err) {
    throw new ProviderError(`request to ${new URL(url).host} failed: ${(err as Error).message}`);
  }
  try {
    if (res.statusCode === 404) {
      await res.body.dump();
      return null;
    }
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new ProviderError(`${new URL(url).host} answered ${res.statusCode}`);
    }
    return await res.body.json();
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw new ProviderError(`${new URL(url).host} sent an unreadable answer: ${(err as Error).message}`);
  }
}
