import { request, type Reply } from './http.ts';
import { createStation, createToken, eventually, type TestStation } from './factories.ts';

export const INGEST_PATH = '/api/v1/integrations/playback';

/** POST an observation as an encoder would: `?stationSlug=` of the station, Bearer credential, JSON body. */
export function ingest(
  baseUrl: string,
  station: { slug: string },
  token: string,
  body: unknown,
  options: { query?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const query = options.query ?? `stationSlug=${encodeURIComponent(station.slug)}`;
  return request(baseUrl, 'POST', `${INGEST_PATH}?${query}`, { token, json: body, headers: options.headers });
}

/** A station with an ingest credential and a listener credential. */
export async function ingestFixture(
  baseUrl: string,
  overrides: Record<string, unknown> = {},
): Promise<{ station: TestStation; ingestToken: string; listenerToken: string }> {
  const station = await createStation(baseUrl, overrides);
  const { token: ingestToken } = await createToken(baseUrl, station.id, ['ingest:write']);
  const { token: listenerToken } = await createToken(baseUrl, station.id, ['listener:read']);
  return { station, ingestToken, listenerToken };
}

/** `eventually()` for checks that answer null/undefined until ready: the ready value, typed without null. */
export async function until<T>(
  check: () => Promise<T | null | undefined> | T | null | undefined,
  options?: { timeoutMs?: number },
): Promise<NonNullable<T>> {
  return (await eventually(check, options)) as NonNullable<T>;
}
