import { HttpError, getJson } from '../../../lib/httpClient.ts';

// The one way artwork providers are called: a GET with a deadline, JSON out, and a clear line between
// "the catalogue has nothing" (null) and "the catalogue did not answer properly" (thrown).

export class ProviderError extends Error {}

/**
 * `Application/version ( contact )`, the form MusicBrainz asks every client to send
 * (https://musicbrainz.org/doc/MusicBrainz_API/Rate_Limiting#Provide_meaningful_User-Agent_strings).
 */
export const userAgent = (contact: string): string => `Waveline/0.1 ( ${contact} )`;

/** GET `url` as JSON; null for 404; throws ProviderError on timeout, other statuses or a non-JSON body. */
export async function catalogueJson(url: string, timeoutMs: number, agent: string): Promise<unknown | null> {
  let answer;
  try {
    answer = await getJson(url, { headers: { 'user-agent': agent }, timeoutMs });
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    const host = new URL(url).host;
    throw new ProviderError(
      err.stage === 'request' ? `request to ${host} failed: ${err.message}` : `${host} sent an unreadable answer: ${err.message}`,
    );
  }
  if (answer.status === 404) return null;
  if (answer.status !== 200) throw new ProviderError(`${new URL(url).host} answered ${answer.status}`);
  return answer.json;
}
