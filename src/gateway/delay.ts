import type { Logger } from '../lib/logger.ts';
import { segmentOf, type Position } from './cursor.ts';
import { replayFrames, stateFrames, type RowReader } from './feedFrames.ts';
import { DELAYED_KINDS, MAX_LATENCY_MS } from './heard.ts';
import { ageAt, kindOf, NOW_PLAYING_ROW, payloadAt, type RowVersion } from './rowVersion.ts';
import { nextGeneration, type ResumeCheck, type StationFeed } from './stationFeed.ts';
import type { FeedChange, StationRows } from './stationRows.ts';
import type { FeedStore } from './store.ts';

// Connections with `stream=` (docs/realtime.md#listener-time-stream): their now-playing and on-air rows are the
// ones the stream's listeners hear, `latency` behind on-air time. One view per (station, latency) — not
// per connection — holds what its listeners hear and one timer for the next version to become audible;
// every connection of streams with that latency shares it (the fan-out's set of the view, fanout.ts).
//
// Position in the delayed timeline: the station's seq (every undelayed change up to it was sent) and the
// heard time up to which the delayed rows were released (`heardTo`). A client at (seq, heard) holds, of
// each delayed row, the version current at `heard` among those up to `seq` (HeardHistory.at); a resume
// sends a delayed row when the version audible now differs from that one, so it is never early (only
// audible versions are sent) and never lossy (a history too short to tell sends the row).

/**
 * The timeline of one station as a stream `latencyMs` behind hears it: one more reader of the station's
 * rows (stationRows.ts) with its own clock. Stands where a StationFeed stands for a connection
 * (session.ts): the same state, replay and cursor (feedFrames.ts), with the delayed rows at heard time.
 */
export class DelayedView implements RowReader {
  readonly stationId: string;
  readonly topic: string;
  readonly key: string;
  readonly latencyMs: number;
  readonly clocked = DELAYED_KINDS;
  readonly feed: StationFeed;
  private readonly rows: StationRows;
  private readonly publish: (change: FeedChange) => void;
  private readonly clock: () => number;
  private readonly unfollow: () => void;
  /** Heard time up to which every version has been looked at (released when due). */
  private scannedTo: number;
  /**
   * The connections' position in heard time (their cursor): it moves when a version is released, so
   * between changes the position, and with it a connection's start, stays the same for every client.
   */
  private heardTo: number;
  /** The version of each delayed row the view's connections hold. */
  private readonly versions = new Map<string, RowVersion | null>();
  /** Framed starts by cursor, for one generation (feed generation, position, now-playing age at heard time). */
  private readonly starts = new Map<string, Buffer[]>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private gen = nextGeneration();
  private genKey = '';
  private closed = false;

  constructor(feed: StationFeed, latencyMs: number, publish: (change: FeedChange) => void, clock: () => number = Date.now) {
    this.feed = feed;
    this.rows = feed.rows;
    this.stationId = feed.stationId;
    this.topic = feed.topic;
    this.key = feed.key;
    this.latencyMs = latencyMs;
    this.publish = publish;
    this.clock = clock;
    this.scannedTo = this.heardTo = clock() - latencyMs;
    for (const rowId of this.rows.versions.rowIds()) this.versions.set(rowId, this.audible(rowId, this.heardTo));
    // A new version is released at once when already audible, else timed.
    this.unfollow = this.rows.follow(() => this.advance());
    this.schedule();
  }

  /**
   * Releases every version audible at `now`, each as one change to the view's connections at its heard
   * moment. Called by the timer, on every new version, and before a connection's start is built.
   */
  advance(now = this.clock()): void {
    if (this.closed) return;
    const from = this.scannedTo;
    const to = Math.max(from, now - this.latencyMs);
    this.scannedTo = to;
    this.rows.versions.prune(now);
    // Every change that became audible since, in the order it was heard, each at its own heard moment
    // (a timer that fires late, or a burst, still sends each change, as the live feed does)…
    for (const version of this.rows.versions.between(from, to))
      if (this.audible(version.rowId, version.moment) === version) this.release(version, version.moment);
    // …then what is audible now where that differs: a change reported after it became audible.
    for (const rowId of this.rows.versions.rowIds()) {
      const version = this.audible(rowId, to);
      if (version) this.release(version, to);
    }
    this.schedule();
  }

  /** The connection's position: the station's seq, and the heard time its delayed rows are at. */
  segment(): string {
    return segmentOf(this.key, { ...this.feed.position(), heard: this.heardTo });
  }

  generation(now = this.clock()): number {
    this.advance(now);
    const key = `${this.feed.generation(now)}|${this.heardTo}|${ageAt(this.versions.get(NOW_PLAYING_ROW), now - this.latencyMs)}`;
    if (key !== this.genKey) {
      this.genKey = key;
      this.gen = nextGeneration();
      this.starts.clear();
    }
    return this.gen;
  }

  /** A live position (no heard time) names no position of the delayed rows in this timeline: a reset. */
  check(position: Position): ResumeCheck {
    return position.heard === undefined ? 'reset' : this.feed.checkSeq(position);
  }

  /** The state at heard time (`now − latency`), shared by every client that starts while nothing changes. */
  stateFrames(cursor: string, now = this.clock()): Buffer[] {
    this.generation(now);
    let frames = this.starts.get(cursor);
    if (!frames) {
      frames = stateFrames(this.rows, this, cursor, now);
      if (this.starts.size >= 32) this.starts.clear();
      this.starts.set(cursor, frames);
    }
    return frames;
  }

  replayAt(position: Position, cursor: string, now = this.clock()): Buffer[] | null {
    this.advance(now);
    return replayFrames(this.rows, this, position, cursor, now);
  }

  /** The version of a delayed row this view's connections hold (feedFrames.ts). */
  held(rowId: string): RowVersion | null {
    return this.versions.get(rowId) ?? null;
  }

  /** Whether a client at `since` lacks the version it should hold now (a history too short to tell: it does). */
  lacks(rowId: string, since: Position): boolean {
    if (since.heard === undefined) return true;
    const had = this.rows.versions.at(rowId, since.heard, since.seq);
    return had === 'unknown' || had?.seq !== this.versions.get(rowId)?.seq;
  }

  canReplay(seq: number): boolean {
    return this.feed.canReplay(seq);
  }

  readBodies(seq: number): Promise<void> {
    return this.feed.readBodies(seq);
  }

  catchUp(): Promise<void> {
    return this.feed.catchUp();
  }

  close(): void {
    this.closed = true;
    this.unfollow();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Sends a version to the view's connections when they do not hold it; their cursor is at `heardAt` then. */
  private release(version: RowVersion, heardAt: number): void {
    const before = this.versions.get(version.rowId) ?? null;
    if (version.seq === before?.seq) return;
    this.versions.set(version.rowId, version);
    this.heardTo = Math.max(this.heardTo, heardAt);
    if (this.rows.isHidden(kindOf(version.rowId))) return;
    this.publish({
      rowId: version.rowId,
      action: version.deleted ? 'delete' : before === null || before.deleted ? 'create' : 'update',
      updatedAt: version.updatedAt,
      payload: payloadAt(this.stationId, version, heardAt, this.latencyMs),
      seq: version.seq,
    });
  }

  /** The version audible at heard time `at` (none when the history cannot tell: never one too early). */
  private audible(rowId: string, at: number): RowVersion | null {
    const version = this.rows.versions.at(rowId, at);
    return version === 'unknown' ? null : version;
  }

  /** One timer for the next version to become audible. */
  private schedule(): void {
    const next = this.rows.versions.nextMoment(this.scannedTo);
    const due = next === null ? Infinity : next + this.latencyMs;
    if (due === this.timerAt && this.timer) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = due;
    if (due === Infinity || this.closed) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Infinity;
        this.advance();
      },
      Math.max(0, due - this.clock()),
    );
    this.timer.unref?.();
  }
}

/**
 * The delayed views of one station, by latency, counted by their connections. The first one reads the
 * station's versions of the last MAX_LATENCY_MS (a gateway that has just started knows only the current
 * rows; store.ts, `heardVersions`), once; from then on the feed keeps its history from the bus.
 */
export class HeardViews {
  private readonly feed: StationFeed;
  private readonly store: FeedStore;
  private readonly publish: (latencyMs: number, change: FeedChange) => void;
  private readonly logger: Logger;
  private readonly views = new Map<number, { view: DelayedView; refs: number }>();
  private deep: Promise<void> | null = null;
  private deepDone = false;

  constructor(feed: StationFeed, store: FeedStore, publish: (latencyMs: number, change: FeedChange) => void, logger: Logger) {
    this.feed = feed;
    this.store = store;
    this.publish = publish;
    this.logger = logger;
  }

  /** The view of a latency, once its history is read (shared by every connection of that latency). */
  async acquire(latencyMs: number): Promise<DelayedView> {
    await this.readHistory();
    return this.acquireNow(latencyMs) as DelayedView;
  }

  /** Whether the history is read: views are then created without waiting. */
  get ready(): boolean {
    return this.deepDone;
  }

  /** The view of a latency without waiting; undefined while the history has not been read. */
  acquireNow(latencyMs: number): DelayedView | undefined {
    if (!this.deepDone) return undefined;
    let entry = this.views.get(latencyMs);
    if (!entry) {
      const view = new DelayedView(this.feed, latencyMs, (change) => this.publish(latencyMs, change));
      this.views.set(latencyMs, (entry = { view, refs: 0 }));
    }
    entry.refs++;
    return entry.view;
  }

  view(latencyMs: number): DelayedView | undefined {
    return this.views.get(latencyMs)?.view;
  }

  /** A connection left: the view goes with its last connection (its timer with it). */
  release(latencyMs: number): void {
    const entry = this.views.get(latencyMs);
    if (!entry || --entry.refs > 0) return;
    entry.view.close();
    this.views.delete(latencyMs);
  }

  close(): void {
    for (const { view } of this.views.values()) view.close();
    this.views.clear();
  }

  private readHistory(): Promise<void> {
    this.deep ??= (async () => {
      const since = Date.now() - MAX_LATENCY_MS;
      const rows = await this.store.heardVersions(this.feed.stationId, new Date(since));
      for (const row of rows) this.feed.rows.addVersion(row);
      this.deepDone = true;
    })().catch((err: unknown) => {
      this.deep = null;
      this.logger.warn({ err, stationId: this.feed.stationId }, 'could not read the station’s recent now-playing and on-air history');
      throw err;
    });
    return this.deep;
  }
}
