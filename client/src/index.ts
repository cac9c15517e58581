// Typed client for the Waveline Station Delivery API: openapi-fetch over the types openapi-typescript
// generated from /openapi.json (src/schema.d.ts — regenerate with `npm run client:generate` at the root).
import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths, Middleware };
export * from './realtime.ts';

/** Every named schema of the document: `Schemas['Station']`, `Schemas['NowPlaying']`, … */
export type Schemas = components['schemas'];
export type Station = Schemas['Station'];
export type ContentRecord = Schemas['ContentRecord'];
export type ContentList = Schemas['ContentList'];
export type NowPlaying = Schemas['NowPlaying'];
export type Schedule = Schemas['Schedule'];
/** The error body of every listener and admin route: `{error: {code, message, requestId, issues?}}`. */
export type ApiError = Schemas['Error'];

export type WavelineClient = Client<paths>;

export interface WavelineClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where Waveline answers, e.g. `https://api.example.org` (no trailing `/api/v1`). */
  baseUrl: string;
  /** A station credential (`wvl_…`) for listener reads, or the operator token for `/admin/v1/…`. */
  token?: string;
}

/**
 * A client whose paths, parameters, bodies and answers are typed from the API document:
 *
 *   const waveline = createWavelineClient({ baseUrl, token });
 *   const { data, error } = await waveline.GET('/api/v1/stations/{stationSlug}/now-playing', { params: { path: { stationSlug } } });
 */
export function createWavelineClient({ baseUrl, token, headers, ...rest }: WavelineClientOptions): WavelineClient {
  return createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(headers as Record<string, string> | undefined) },
    ...rest,
  });
}
