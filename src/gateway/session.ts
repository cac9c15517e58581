import { stationChannel } from '../feed/names.ts';
import { cursorOf, parseCursor, segmentOf, type Position } from './cursor.ts';
import { resetFrame, syncedFrame, type SyncMode } from './frames.ts';
import type { ChannelSet } from './fanout.ts';
import type { ResumeCheck } from './stationFeed.ts';

// The start of a feed connection, the same for both transports
// (docs/realtime.md#resume-reset-and-synced): for each channel its full state (`fresh`, or `reset` when the
// cursor cannot be resumed) or only what changed since the cursor (`resumed`), then `synced`, then live events. Every
// answer comes from the gateway's memory; the only reads are shared per station (a catch-up, the bodies
// of older content rows), so a reconnect storm costs Postgres one read per station, not one per client.

/**
 * One channel of a connection as its start is built: a station's live feed (StationFeed), or its
 * timeline as a stream's listeners hear it (DelayedView, for a connection with `stream=`).
 */
export interface FeedChannel {
  readonly stationId: string;
  /** The public channel (`stations.{id}.feed`). */
  readonly topic: string;
  /** The channel's key in cursors. */
  readonly key: string;
  generation(now?: number): number;
  segment(): string;
  check(position: Position): ResumeCheck;
  stateFrames(cursor: string, now?: number): Buffer[];
  replayAt(position: Position, cursor: string, now?: number): Buffer[] | null;
  canReplay(seq: number): boolean;
  readBodies(seq: number): Promise<void>;
  catchUp(): Promise<void>;
}

/** Per-connection state (WebSocket or SSE), kept small: a gateway holds tens of thousands of these. */
export interface Connection {
  ip: string;
  /** The raw query until admission has read it. */
  query: string;
  /** Stations whose feed this socket receives (set while it is decided; one array shared by many sockets). */
  stationIds: readonly string[];
  /** With `stream=`: the stream's latency (ms) at each station, aligned with `stationIds`; null: live. */
  latencies: readonly number[] | null;
  admitted: boolean;
  closed: boolean;
  /** A frame was dropped for backpressure (the socket is being closed as a slow consumer). */
  slow: boolean;
  /** The resume cursor the client passed, until its state is sent. */
  lastEventId: string | null;
  /**
   * Whether the client asked for resume and so meets `reset` and `synced`: every SSE stream, and a
   * WebSocket only with a `lastEventId` parameter (even empty). A WebSocket client written to the API
   * document alone receives `event` and `error` messages only.
   */
  resume: boolean;
  /** The connection's set of channels in the fan-out, once admitted. */
  set: ChannelSet | null;
}

/** A connection not yet decided (both transports start one the same way). */
export function newConnection(ip: string, query: string, lastEventId: string | null, resume: boolean): Connection {
  return { ip, query, stationIds: [], latencies: null, admitted: false, closed: false, slow: false, lastEventId, resume, set: null };
}

/** Where a connection's frames go: a WebSocket or an SSE stream. */
export interface Sink {
  /** Writes one message; false when the connection is gone (closed, or closed for backpressure). */
  send(frame: Buffer | string, cursor: string | null): boolean;
  /** Live events from here on (the same turn as the last `send`, so no change falls in between). */
  subscribe(): void;
}

/** The last `synced` frames built: every client of a burst at the same position gets the same bytes. */
const syncedFrames = new Map<string, Buffer>();

function syncedOf(cursor: string, states: Record<string, SyncMode>): Buffer {
  const key = `${cursor} ${Object.values(states).join(',')} ${Object.keys(states).join(',')}`;
  let frame = syncedFrames.get(key);
  if (!frame) {
    if (syncedFrames.size >= 64) syncedFrames.clear();
    frame = Buffer.from(syncedFrame(cursor, states));
    syncedFrames.set(key, frame);
  }
  return frame;
}

/** What the client's cursor says of each channel of the connection. */
type Claim = { kind: 'fresh' } | { kind: 'reset' } | { kind: 'position'; position: Position };

/**
 * Reads the cursor against the connection's stations. No cursor: every channel is fresh. A cursor that
 * does not parse, or names a channel the connection does not have, is a reset of every channel; a
 * channel it does not name is fresh.
 */
export function claimsOf(feeds: readonly FeedChannel[], lastEventId: string | null): Claim[] {
  if (lastEventId === null || lastEventId === '') return feeds.map(() => ({ kind: 'fresh' }));
  const positions = parseCursor(lastEventId);
  const keys = new Set(feeds.map((feed) => feed.key));
  if (!positions || [...positions.keys()].some((key) => !keys.has(key))) return feeds.map(() => ({ kind: 'reset' }));
  return feeds.map((feed) => {
    const position = positions.get(feed.key);
    return position ? { kind: 'position', position } : { kind: 'fresh' };
  });
}

/**
 * The reads a resume needs before it can be answered from memory: a catch-up of a station this gateway
 * is behind on (the client saw a change from another node first), the bodies of older content rows that
 * changed since. Resolves when they are done (a failed read makes that channel a reset later).
 */
export async function prepare(feeds: readonly FeedChannel[], lastEventId: string | null): Promise<void> {
  const claims = claimsOf(feeds, lastEventId);
  await Promise.all(
    feeds.map(async (feed, i) => {
      const claim = claims[i];
      if (claim.kind !== 'position') return;
      if (feed.check(claim.position) === 'ahead') await feed.catchUp();
      if (feed.check(claim.position) === 'resumable' && !feed.canReplay(claim.position.seq))
        await feed.readBodies(claim.position.seq).catch(() => {});
    }),
  );
}

/** Whether `begin` can answer at once (the common case: no cursor, or a recent one). */
export function ready(feeds: readonly FeedChannel[], lastEventId: string | null, resume: boolean, now = Date.now()): boolean {
  if (reusable(feeds, lastEventId, resume, now)) return true;
  const claims = claimsOf(feeds, lastEventId);
  return feeds.every((feed, i) => {
    const claim = claims[i];
    if (claim.kind !== 'position') return true;
    const check = feed.check(claim.position);
    return check === 'reset' || (check === 'resumable' && feed.canReplay(claim.position.seq));
  });
}

/** One message of a connection's start, and the cursor it carries (SSE writes it as the `id:` line). */
interface Message {
  frame: Buffer;
  cursor: string | null;
}

/**
 * What `begin` sent for a cursor and a set of feeds, while none of them has changed (`generation`): the
 * clients of a reconnect burst mostly bring the same cursor, and each would otherwise cost the same
 * claims, checks and cache keys again.
 */
interface Opening {
  feeds: readonly FeedChannel[];
  generations: number[];
  messages: Message[];
}

/** Openings by the connection's first feed (a feed dropped with its station takes its openings along), then by cursor and channels. */
const openings = new WeakMap<FeedChannel, Map<string, Opening>>();
const OPENINGS_PER_FEED = 64;

// `+` / `-` first: a start with `synced` (resume asked, even with an empty cursor) and one without are
// different bytes for the same cursor.
const openingKey = (feeds: readonly FeedChannel[], lastEventId: string | null, resume: boolean): string => {
  let key = (resume ? '+' : '-') + (lastEventId ?? '');
  for (const feed of feeds) key += ` ${feed.key}`;
  return key;
};

/** The opening last sent for this cursor and these very feeds, when none of them has changed since. */
function reusable(feeds: readonly FeedChannel[], lastEventId: string | null, resume: boolean, now: number): Opening | undefined {
  if (feeds.length === 0) return undefined;
  const opening = openings.get(feeds[0])?.get(openingKey(feeds, lastEventId, resume));
  if (!opening || opening.feeds.length !== feeds.length) return undefined;
  for (const [i, feed] of feeds.entries())
    if (opening.feeds[i] !== feed || opening.generations[i] !== feed.generation(now)) return undefined;
  return opening;
}

/**
 * Sends each channel's state or replay, then `synced`, and subscribes the sink, in one turn. Messages
 * before `synced` carry the cursor the connection started from (resumed channels at their old position,
 * the others not named): a client cut off halfway resumes from there and misses nothing. Without
 * `resume` (a WebSocket without `lastEventId`) every channel is fresh and neither `reset` nor `synced`
 * is sent: only `event` messages (docs/realtime.md#what-arrives).
 */
export function begin(sink: Sink, feeds: readonly FeedChannel[], lastEventId: string | null, resume: boolean, now = Date.now()): boolean {
  const opening = reusable(feeds, lastEventId, resume, now) ?? open(feeds, lastEventId, resume, now);
  for (const message of opening.messages) if (!sink.send(message.frame, message.cursor)) return false;
  sink.subscribe();
  return true;
}

/** The messages of a connection's start; kept for the next clients when it needed no read. */
function open(feeds: readonly FeedChannel[], lastEventId: string | null, resume: boolean, now: number): Opening {
  const generations = feeds.map((feed) => feed.generation(now));
  const claims = claimsOf(feeds, lastEventId);
  let answeredFromMemory = true;
  const modes: SyncMode[] = feeds.map((feed, i) => {
    const claim = claims[i];
    if (claim.kind !== 'position') return claim.kind;
    const check = feed.check(claim.position);
    if (check === 'resumable' && feed.canReplay(claim.position.seq)) return 'resumed';
    // What `prepare` would have read (or tried to): the next client may find it in.
    if (check !== 'reset') answeredFromMemory = false;
    return 'reset';
  });
  const start = cursorOf(
    feeds.flatMap((feed, i) => {
      const claim = claims[i];
      return modes[i] === 'resumed' && claim.kind === 'position' ? [segmentOf(feed.key, claim.position)] : [];
    }),
  );
  const messages: Message[] = [];
  const synced: Record<string, SyncMode> = {};
  for (const [i, feed] of feeds.entries()) {
    const claim = claims[i];
    let frames: Buffer[] | null = null;
    if (modes[i] === 'resumed' && claim.kind === 'position') frames = feed.replayAt(claim.position, start, now);
    if (frames === null) {
      if (modes[i] === 'reset' && resume) messages.push({ frame: Buffer.from(resetFrame(feed.topic)), cursor: null });
      frames = feed.stateFrames(start, now);
    }
    for (const frame of frames) messages.push({ frame, cursor: start });
    synced[stationChannel(feed.stationId)] = modes[i];
  }
  if (resume) {
    const cursor = cursorOf(feeds.map((feed) => feed.segment()));
    messages.push({ frame: syncedOf(cursor, synced), cursor });
  }
  const opening: Opening = { feeds, generations, messages };
  if (answeredFromMemory && feeds.length > 0) {
    let kept = openings.get(feeds[0]);
    if (!kept) openings.set(feeds[0], (kept = new Map()));
    if (kept.size >= OPENINGS_PER_FEED) kept.clear();
    kept.set(openingKey(feeds, lastEventId, resume), opening);
  }
  return opening;
}
