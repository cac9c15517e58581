// Audience (docs/audience.md).

/** Where a stream's listener count is read: an Icecast server's JSON status (one mount) or a SHOUTcast v2 stream's stats. */
export type StreamStats = { kind: 'icecast'; url: string; mount: string } | { kind: 'shoutcast'; url: string };

/** A station's stream as the audience sees it: its key, how far behind on-air its listeners hear, and its count source. */
export interface AudienceStream {
  key: string;
  latencySeconds: number;
  stats: StreamStats | null;
}

/** One listener count of one stream at one instant. */
export interface Sample {
  stationId: string;
  streamKey: string;
  at: Date;
  listeners: number;
  source: 'poll' | 'push';
}

/** How long samples are kept (35 days: docs/audience.md#the-poller): the per-play figures outlive them in play_performances. */
export const SAMPLE_RETENTION_DAYS = 35;

/** Pushed samples: at most this far back, and never ahead of the server clock by more than the skew allowed. */
export const PUSH_WINDOW_MS = 24 * 3600_000;
export const PUSH_FUTURE_SKEW_MS = 5_000;

/**
 * A station's streams from its stored `profile.streamUrls` (raw JSON): the key stored at write time (or
 * `stream-{n}` for a row written otherwise), the latency (0 when unset), and `stats` when it is usable.
 */
export function audienceStreams(rawStreamUrls: unknown): AudienceStream[] {
  if (!Array.isArray(rawStreamUrls)) return [];
  return rawStreamUrls.map((entry: Record<string, unknown>, i) => ({
    key: typeof entry?.key === 'string' ? entry.key : `stream-${i + 1}`,
    latencySeconds: typeof entry?.latencySeconds === 'number' ? entry.latencySeconds : 0,
    stats: statsOf(entry?.stats),
  }));
}

function statsOf(raw: unknown): StreamStats | null {
  if (!raw || typeof raw !== 'object') return null;
  const s = raw as Record<string, unknown>;
  if (typeof s.url !== 'string') return null;
  if (s.kind === 'icecast' && typeof s.mount === 'string') return { kind: 'icecast', url: s.url, mount: s.mount };
  if (s.kind === 'shoutcast') return { kind: 'shoutcast', url: s.url };
  return null;
}
