// Channel and event names of the public realtime feed (docs/realtime.md#what-arrives).

export const FEED_KINDS = ['schedule', 'on-air', 'now-playing', 'content'] as const;
export type FeedKind = (typeof FEED_KINDS)[number];

export const FEED_PROTOCOL = 'waveline.public.v1';

/** The public channel listeners subscribe to. */
export const stationChannel = (stationId: string): string => `stations.${stationId}.feed`;

/** Row id inside a station's feed: unique per (kind, entry). */
export const feedRowId = (kind: FeedKind, entry: string): string => `${kind}:${entry}`;

export type FeedAction = 'create' | 'update' | 'delete';

export function eventNames(stationId: string, rowId: string, action: FeedAction): string[] {
  const base = `${stationChannel(stationId)}.rows`;
  return [`${base}.${rowId}.${action}`, `${base}.*.${action}`];
}

/** How long changes and tombstones are kept for clients resuming from a cursor (docs/realtime.md#resume-reset-and-synced). */
export const FEED_HISTORY_MS = 24 * 60 * 60 * 1000;
