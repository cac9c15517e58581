// Typed client for the Waveline Station Delivery API: openapi-fetch over the types openapi-typescript
// generated from /openapi.json (src/schema.d.ts — regenerate with `npm run client:generate` at the root).
import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths, Middleware };

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

// ---- The realtime feed (docs/realtime.md) ----
// The gateway's WebSocket and SSE feed is not part of /openapi.json: its messages are typed here by hand
// from the contract.

/** The payload row of an event: `data_json` is a JSON string of {@link FeedRowData}. */
export interface FeedRow {
  $id: string;
  station_id: string;
  kind: 'schedule' | 'on-air' | 'now-playing' | 'content';
  entry: string;
  data_json: string;
  $updatedAt: string;
}

/** What `JSON.parse(payload.data_json)` gives. */
export interface FeedRowData<T = unknown> {
  protocol: 'waveline.public.v1';
  stationId: string;
  type: FeedRow['kind'];
  data: T | null;
}

/** A change of one row (or a row of the state sent on connect). `channels` is always an array. */
export interface FeedEventMessage {
  type: 'event';
  data: {
    events: string[];
    channels: string[];
    timestamp: string;
    payload: FeedRow;
    /** The connection's position after this message (pass it back as `lastEventId` to resume). */
    cursor: string;
  };
}

/** A refused connection (unknown or offline station, realtime off, bad channel); a close 1008 follows. */
export interface FeedErrorMessage {
  type: 'error';
  data: { code: string; message: string };
}

/** How a channel's state was given to a connection that asked for resume. */
export type FeedChannelState = 'fresh' | 'resumed' | 'reset';

/** The channel's full current state follows (its cursor position could not be resumed). */
export interface FeedResetMessage {
  type: 'reset';
  data: { channel: string };
}

/** The state or replay of every channel was sent; live events follow. The map is `states`, not `channels`. */
export interface FeedSyncedMessage {
  type: 'synced';
  data: { cursor: string; states: Record<string, FeedChannelState> };
}

/** What a WebSocket connection without `lastEventId` receives: `event` and `error` messages only. */
export type FeedMessage = FeedEventMessage | FeedErrorMessage;

/** What a resuming WebSocket (`lastEventId` in its URL, even empty) and every SSE stream receive. */
export type ResumingFeedMessage = FeedMessage | FeedResetMessage | FeedSyncedMessage;

export interface RealtimeUrlOptions {
  /**
   * Ask for resume: a cursor kept from an earlier message, or `''` for the full state plus `synced`.
   * Leave it out for the API document's plain feed (no `reset`, no `synced`).
   */
  lastEventId?: string;
  /** `'sse'` for the Server-Sent Events URL (`EventSource` sends `Last-Event-ID` by itself when it reconnects). */
  transport?: 'websocket' | 'sse';
}

/**
 * The feed URL of some stations on a gateway (`wss://realtime.example.org`, or `https://…` for SSE):
 *
 *   new WebSocket(realtimeUrl(gateway, [stationId], { lastEventId: saved ?? '' }));
 */
export function realtimeUrl(gateway: string, stationIds: readonly string[], options: RealtimeUrlOptions = {}): string {
  const base = gateway.replace(/\/+$/, '');
  const channels = stationIds.map((id) => `channels[]=${encodeURIComponent(`stations.${id}.feed`)}`).join('&');
  const url =
    options.transport === 'sse' ? `${base.replace(/^ws(s?):/, 'http$1:')}/v1/realtime/sse?${channels}` : `${base}/v1/realtime?${channels}`;
  return options.lastEventId === undefined ? url : `${url}&lastEventId=${encodeURIComponent(options.lastEventId)}`;
}
