import { eventNames, FEED_PROTOCOL, feedRowId, stationChannel, type FeedAction, type FeedKind } from '../feed/names.ts';

// The feed's JSON frames (docs/realtime.md#what-arrives). The payload is serialised once per change;
// the event frame around it is assembled by concatenation, so a snapshot frame and a live frame of the
// same row share the payload bytes.

export interface RowChange {
  kind: FeedKind;
  entry: string;
  data?: unknown;
  updatedAt: string;
}

/** The JSON of the payload row `{$id, station_id, kind, entry, data_json, $updatedAt}`. */
export function payloadJson(stationId: string, row: RowChange): string {
  const dataJson = JSON.stringify({ protocol: FEED_PROTOCOL, stationId, type: row.kind, data: row.data ?? null });
  return JSON.stringify({
    $id: feedRowId(row.kind, row.entry),
    station_id: stationId,
    kind: row.kind,
    entry: row.entry,
    data_json: dataJson,
    $updatedAt: row.updatedAt,
  });
}

/**
 * `{type: "event", data: {events, channels, timestamp, payload, cursor}}`. `timestamp` is the time of the
 * change (the row's `updatedAt`), so every gateway sends the same bytes for the same change. `cursor`
 * (cursor.ts) is the position of every channel of the receiving connection after this message.
 */
export function eventFrame(
  stationId: string,
  rowId: string,
  action: FeedAction,
  updatedAt: string,
  payload: string,
  cursor: string,
): string {
  return (
    `{"type":"event","data":{"events":${JSON.stringify(eventNames(stationId, rowId, action))},` +
    `"channels":${JSON.stringify([stationChannel(stationId)])},"timestamp":${JSON.stringify(updatedAt)},"payload":${payload},` +
    `"cursor":"${cursor}"}}`
  );
}

/** How a channel's state was given to a resuming connection (the `synced` message). */
export type SyncMode = 'fresh' | 'resumed' | 'reset';

/** `{type: "reset", data: {channel}}`: the channel's full state follows. */
export function resetFrame(channel: string): string {
  return JSON.stringify({ type: 'reset', data: { channel } });
}

/**
 * `{type: "synced", data: {cursor, states}}`: the state or replay of every channel was sent; live events
 * follow. The map is `states`, never `channels`: in every `event` message `data.channels` is an array.
 */
export function syncedFrame(cursor: string, states: Record<string, SyncMode>): string {
  return JSON.stringify({ type: 'synced', data: { cursor, states } });
}

/** Codes of the feed's error message, in the error vocabulary of docs/errors.md#error-codes. */
export type FeedErrorCode = 'VALIDATION_ERROR' | 'NOT_FOUND' | 'MODULE_DISABLED' | 'RATE_LIMITED' | 'PROVIDER_UNAVAILABLE';

export function errorFrame(code: FeedErrorCode, message: string): string {
  return JSON.stringify({ type: 'error', data: { code, message } });
}
