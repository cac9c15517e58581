// The realtime feed's messages (docs/realtime.md), typed for station apps. The gateway is not part of
// /openapi.json (a WebSocket and an SSE stream), so these types are written by hand from the contract.

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
