import { ValidationError, type Issue } from '../../lib/errors.ts';
import { distance } from 'fastest-levenshtein';
import { Type, type Static } from '../../http/schema.ts';
import type { Station } from './model.ts';

// Listener time (docs/now-playing.md#heard-time-answers-in-the-listeners-time): a read
// with `stream={key}` answers at heard time, `now − latencySeconds` of that stream.

/** The `stream` query parameter of the listener reads that answer in listener time. */
export const StreamParam = Type.String({
  minLength: 1,
  maxLength: 64,
  description:
    'a key of the station’s `profile.streamUrls[]`: the answer is the one that stream’s listeners hear now (at now − latencySeconds)',
});

/** The query of reads that take only `stream` (now-playing, current broadcast, live). */
export const StreamQuery = Type.Object({ stream: Type.Optional(StreamParam) }, { additionalProperties: false });
export type StreamQuery = Static<typeof StreamQuery>;

/** The `stream` part of an answer: `{key, latencySeconds}`. */
export const StreamRef = Type.Object({ key: Type.String(), latencySeconds: Type.Integer({ minimum: 0 }) }, { title: 'StreamRef' });

export interface StreamView {
  key: string;
  latencySeconds: number;
}

/** The instant a read answers for, and how far that lies behind now (0 without a stream). */
export interface ListenerTime {
  stream: StreamView | null;
  /** Heard time: now − latency. */
  at: Date;
  /** The latency in ms: a stored change at play time t is heard at t + shiftMs. */
  shiftMs: number;
}

/**
 * The station's stream keys, the one nearest to `key` first (a prefix either way, then edit distance; ties
 * keep the station's order): the keys a listener most likely meant lead the list.
 */
function nearestFirst(key: string, keys: readonly string[]): string[] {
  const closeness = (candidate: string): number => (candidate.startsWith(key) || key.startsWith(candidate) ? -1 : distance(key, candidate));
  return keys
    .map((candidate, index) => ({ candidate, index, closeness: closeness(candidate) }))
    .sort((a, b) => a.closeness - b.closeness || a.index - b.index)
    .map((entry) => entry.candidate);
}

/**
 * The stream a read names, or null without one; an unknown key is 400 naming `stream`, its message
 * listing the station's keys and its suggestion every key, nearest first, comma-separated (keys hold
 * no commas: `^[a-z0-9][a-z0-9-]{0,31}$`; a string keeps `suggestion` the one type the error body
 * documents). A station without streams has no suggestion: its message says it lists none.
 */
export function streamOf(station: Pick<Station, 'profile'>, key: string | undefined): StreamView | null {
  if (key === undefined) return null;
  const streams = station.profile.streamUrls ?? [];
  const found = streams.find((s) => s.key === key);
  if (found) return { key: found.key, latencySeconds: found.latencySeconds };
  const keys = streams.map((s) => s.key);
  const issue: Issue = {
    path: 'stream',
    code: 'invalid_value',
    message: keys.length
      ? `stream must be a key of one of the station’s streams: ${keys.join(', ')} (got "${key}")`
      : `the station lists no streams, so stream cannot be used (got "${key}")`,
  };
  if (keys.length) issue.suggestion = nearestFirst(key.toLowerCase(), keys).join(', ');
  throw new ValidationError('Unknown stream.', [issue]);
}

/** Heard time for `stream` at `now` (`now` itself without a stream). */
export function listenerTime(stream: StreamView | null, now: Date): ListenerTime {
  const shiftMs = stream ? stream.latencySeconds * 1000 : 0;
  return { stream, at: shiftMs ? new Date(now.getTime() - shiftMs) : now, shiftMs };
}

/** `{stream}` to spread into an answer: present only when the read named one ("without stream nothing changes"). */
export const streamPart = (time: ListenerTime): { stream?: StreamView } => (time.stream ? { stream: time.stream } : {});
