import { cursorOf } from './cursor.ts';
import { eventFrame } from './frames.ts';
import { DELAYED_KINDS } from './heard.ts';
import type { FeedChange } from './stationFeed.ts';

// Live events to every connection of a station. A connection with `stream=` (delay.ts) is in a set of its
// own per latency: its now-playing and on-air events come from the station's delayed view of that latency
// (`delayedChange`), when they become audible, instead of the live ones.
// A frame's cursor names the position of every channel of
// the receiving connection, so connections are grouped by their set of channels: one frame per set and
// change, built once and written to the set's WebSocket topic (uWS publish) and its SSE streams. Nearly
// every connection has one channel; its set's topic is the station's channel.
//
// SSE messages of one event-loop turn are written to each stream in one write (uWS does the same for
// the WebSocket messages it publishes within a turn): a burst of changes costs one write per stream.

/** An SSE stream as the fan-out sees it. */
export interface StreamOut {
  write(bytes: Buffer): void;
  /** The fan-out's message number when the stream joined: earlier messages are already in its state. */
  joinedAt: number;
}

export interface ChannelSet {
  readonly topic: string;
  readonly stationIds: readonly string[];
  /** Latency (ms) of the connection's stream at each station (0: live), aligned with `stationIds`. */
  readonly latencies: readonly number[];
  refs: number;
  readonly streams: Set<StreamOut>;
  /** SSE messages of this turn, numbered, not yet written. */
  pending: Array<{ n: number; bytes: Buffer }>;
}

/** `id: <cursor>` (when the message has one) and `data: <json>`, as one SSE message. */
export function sseMessage(frame: Buffer | string, cursor: string | null): Buffer {
  const id = cursor === null ? '' : `id: ${cursor}\n`;
  return Buffer.concat([Buffer.from(`${id}data: `), typeof frame === 'string' ? Buffer.from(frame) : frame, Buffer.from('\n\n')]);
}

export class Fanout {
  private readonly sets = new Map<string, ChannelSet>();
  private readonly setsOfStation = new Map<string, Set<ChannelSet>>();
  /** The live set last joined with a list of station ids. */
  private readonly setOfList = new WeakMap<readonly string[], ChannelSet>();
  /** The live feed (latency 0) or the delayed view of a station whose position a cursor names. */
  private readonly channel: (stationId: string, latencyMs: number) => { segment(): string } | undefined;
  private readonly publishWs: (topic: string, frame: Buffer) => void;
  private readonly sent: (frames: number, bytes: number) => void;
  private counter = 0;
  private readonly dirty = new Set<ChannelSet>();
  private flushing: NodeJS.Immediate | null = null;

  constructor(
    channel: (stationId: string, latencyMs: number) => { segment(): string } | undefined,
    publishWs: (topic: string, frame: Buffer) => void,
    sent: (frames: number, bytes: number) => void,
  ) {
    this.channel = channel;
    this.publishWs = publishWs;
    this.sent = sent;
  }

  /** The set of a connection's stations (counted until `leave`). */
  join(stationIds: readonly string[], latencies: readonly number[] | null = null): ChannelSet {
    // Admission hands every listener of a query the same list: no sort, key or look-up per connection.
    const known = latencies === null ? this.setOfList.get(stationIds) : undefined;
    if (known && known.refs > 0) {
      known.refs++;
      return known;
    }
    const members = stationIds.map((stationId, i) => ({ stationId, latency: latencies?.[i] ?? 0 }));
    members.sort((a, b) => (a.stationId < b.stationId ? -1 : a.stationId > b.stationId ? 1 : 0));
    const sorted = members.map((m) => m.stationId);
    const named = members.map((m) => (m.latency > 0 ? `${m.stationId}@${m.latency}` : m.stationId));
    const topic = named.length === 1 ? `stations.${named[0]}.feed` : `set:${named.join(',')}`;
    let set = this.sets.get(topic);
    if (!set) {
      set = { topic, stationIds: sorted, latencies: members.map((m) => m.latency), refs: 0, streams: new Set(), pending: [] };
      this.sets.set(topic, set);
      for (const stationId of sorted) {
        let of = this.setsOfStation.get(stationId);
        if (!of) this.setsOfStation.set(stationId, (of = new Set()));
        of.add(set);
      }
    }
    set.refs++;
    if (latencies === null) this.setOfList.set(stationIds, set);
    return set;
  }

  /** An SSE stream receives the set's live events from now on (its state was written in this turn). */
  subscribeStream(set: ChannelSet, stream: StreamOut): void {
    stream.joinedAt = this.counter;
    set.streams.add(stream);
  }

  leave(set: ChannelSet): void {
    if (--set.refs > 0) return;
    this.sets.delete(set.topic);
    for (const stationId of set.stationIds) {
      const of = this.setsOfStation.get(stationId);
      of?.delete(set);
      if (of?.size === 0) this.setsOfStation.delete(stationId);
    }
  }

  /**
   * A change of a station: one frame per set of channels that includes it, with that set's cursor. A
   * now-playing or on-air change skips the sets that hear the station delayed (`delayedChange`).
   */
  change(stationId: string, change: FeedChange): void {
    this.send(stationId, change, DELAYED_KINDS.has(change.rowId.slice(0, change.rowId.indexOf(':'))) ? 0 : null);
  }

  /** A now-playing or on-air change as the station's delayed view of `latencyMs` releases it. */
  delayedChange(stationId: string, latencyMs: number, change: FeedChange): void {
    this.send(stationId, change, latencyMs);
  }

  /** To the sets that have the station at `latency` (null: at any). */
  private send(stationId: string, change: FeedChange, latency: number | null): void {
    const sets = this.setsOfStation.get(stationId);
    if (!sets) return;
    for (const set of sets) {
      if (latency !== null && set.latencies[set.stationIds.indexOf(stationId)] !== latency) continue;
      const segments: string[] = [];
      for (const [i, id] of set.stationIds.entries()) {
        const channel = this.channel(id, set.latencies[i]);
        if (channel) segments.push(channel.segment());
      }
      const cursor = cursorOf(segments);
      const frame = Buffer.from(eventFrame(stationId, change.rowId, change.action, change.updatedAt, change.payload, cursor));
      this.publishWs(set.topic, frame);
      if (set.streams.size === 0) continue;
      set.pending.push({ n: ++this.counter, bytes: sseMessage(frame, cursor) });
      this.dirty.add(set);
      this.flushing ??= setImmediate(() => this.flush());
    }
  }

  /** Writes each set's SSE messages of the turn to its streams, one write per stream. */
  flush(): void {
    this.flushing = null;
    for (const set of this.dirty) {
      const pending = set.pending;
      set.pending = [];
      if (pending.length === 0) continue;
      const all = pending.length === 1 ? pending[0].bytes : Buffer.concat(pending.map((p) => p.bytes));
      let frames = 0;
      let bytes = 0;
      for (const stream of set.streams) {
        let out = all;
        let count = pending.length;
        if (stream.joinedAt >= pending[0].n) {
          // Joined during the turn: only what changed after its state was written.
          const later = pending.filter((p) => p.n > stream.joinedAt);
          if (later.length === 0) continue;
          out = Buffer.concat(later.map((p) => p.bytes));
          count = later.length;
        }
        stream.write(out);
        frames += count;
        bytes += out.length;
      }
      this.sent(frames, bytes);
    }
    this.dirty.clear();
  }
}
