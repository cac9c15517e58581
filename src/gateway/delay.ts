import { feedRowId } from '../feed/names.ts';
import type { Logger } from '../lib/logger.ts';
import { segmentOf, type Position } from './cursor.ts';
import { heardPayload, MAX_LATENCY_MS, type HeardVersion } from './heard.ts';
import { nextGeneration, type DelayedRows, type FeedChange, type ResumeCheck, type StationFeed } from './stationFeed.ts';
import type { FeedStore } from './store.ts';

const NOW_PLAYING_ROW = feedRowId('now-playing', 'current');

// Connections with `stream=` (decisions.md, "Listener time"): their now-playing and on-air rows are the
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
 * The timeline of one station as a stream `latencyMs` behind hears it. Stands where a StationFeed stands
 * for a connection (session.ts): the same state, replay and cursor, with the delayed rows at heard time.
 */
export class DelayedView {
  readonly stationId: string;
  readonly topic: string;
  readonly key: string;
  readonly latencyMs: number;
  readonly feed: StationFeed;
  private readonly publish: (change: FeedChange) => void;
  private readonly clock: () => number;
  /** Heard time up to which every version has been looked at (released when due). */
  private scannedTo: number;
  /**
   * The connections' position in heard time (their cursor): it moves when a version is released, so
   * between changes the position, and with it a connection's start, stays the same for every client.
   */
  private heardTo: number;
  /** The version of each delayed row the view's connections hold. */
  private readonly held = new Map<string, HeardVersion | null>();
  /** Framed starts by (feed generation, position, now-playing age at heard time, cursor). */
  private readonly starts = new Map<string, Buffer[]>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private gen = nextGeneration();
  private genKey = '';
  private closed = false;

  constructor(feed: StationFeed, latencyMs: number, publish: (change: FeedChange) => void, clock: () => number = Date.now) {
    this.feed = feed;
    this.stationId = feed.stationId;
    this.topic = feed.topic;
    this.key = feed.key;
    this.latencyMs = latencyMs;
    this.publish = publish;
    this.clock = clock;
    this.scannedTo = this.heardTo = clock() - latencyMs;
    for (const rowId of feed.heard.rowIds()) this.held.set(rowId, this.audible(rowId, this.heardTo));
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
    this.feed.heard.prune(now);
    // Every change that became audible since, in the order it was heard, each at its own heard moment
    // (a timer that fires late, or a burst, still sends each change, as the live feed does)…
    for (const version of this.feed.heard.between(from, to))
      if (this.audible(version.rowId, version.moment) === version) this.release(version, version.moment);
    // …then what is audible now where that differs: a change reported after it became audible.
    for (const rowId of this.feed.heard.rowIds()) {
      const version = this.audible(rowId, to);
      if (version) this.release(version, to);
    }
    this.schedule();
  }

  /** A version was applied to the station's feed: released at once when already audible, else timed. */
  onVersion(): void {
    this.advance();
  }

  /** The connection's position: the station's seq, and the heard time its delayed rows are at. */
  segment(): string {
    return segmentOf(this.key, { ...this.feed.position(), heard: this.heardTo });
  }

  generation(now = this.clock()): number {
    this.advance(now);
    const key = `${this.feed.generation(now)}|${this.heardTo}|${this.heardAge(now)}`;
    if (key !== this.genKey) {
      this.genKey = key;
      this.gen = nextGeneration();
      this.starts.clear();
    }
    return this.gen;
  }

  /** A live position (no heard time) names no position of the delayed rows in this timeline: a reset. */
  check(position: Position): ResumeCheck {
    return position.heard === undefined ? 'reset' : this.feed.check(position, true);
  }

  /** The state at heard time (`now − latency`), shared by every client that starts while nothing changes. */
  stateFrames(cursor: string, now = this.clock()): Buffer[] {
    this.generation(now);
    let frames = this.starts.get(cursor);
    if (!frames) {
      frames = this.feed.stateFrames(cursor, now, this.rows(null, now));
      if (this.starts.size >= 32) this.starts.clear();
      this.starts.set(cursor, frames);
    }
    return frames;
  }

  replayAt(position: Position, cursor: string, now = this.clock()): Buffer[] | null {
    this.advance(now);
    return this.feed.replayFrames(position.seq, cursor, now, this.rows(position, now));
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
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Sends a version to the view's connections when they do not hold it; their cursor is at `heardAt` then. */
  private release(version: HeardVersion, heardAt: number): void {
    const before = this.held.get(version.rowId) ?? null;
    if (version.seq === before?.seq) return;
    this.held.set(version.rowId, version);
    this.heardTo = Math.max(this.heardTo, heardAt);
    if (this.feed.isHidden(version.rowId.slice(0, version.rowId.indexOf(':')))) return;
    this.publish({
      rowId: version.rowId,
      action: version.deleted ? 'delete' : before === null || before.deleted ? 'create' : 'update',
      updatedAt: version.updatedAt,
      payload: heardPayload(this.stationId, version, heardAt, this.latencyMs),
      seq: version.seq,
    });
  }

  /** The age of the held now-playing track at heard time, in whole seconds (its derived fields move with it). */
  private heardAge(now: number): number | null {
    const nowPlaying = this.held.get(NOW_PLAYING_ROW);
    return nowPlaying ? Math.floor((now - this.latencyMs - nowPlaying.moment) / 1000) : null;
  }

  /** The delayed rows as heard now (`now − latency`); `since`: the resuming client's position. */
  private rows(since: Position | null, now: number): DelayedRows {
    return {
      heardAt: now - this.latencyMs,
      latencyMs: this.latencyMs,
      row: (rowId) => this.held.get(rowId) ?? null,
      changedSince: (rowId) => {
        if (!since || since.heard === undefined) return true;
        const had = this.feed.heard.at(rowId, since.heard, since.seq);
        return had === 'unknown' || had?.seq !== this.held.get(rowId)?.seq;
      },
    };
  }

  /** The version audible at heard time `at` (none when the history cannot tell: never one too early). */
  private audible(rowId: string, at: number): HeardVersion | null {
    const version = this.feed.heard.at(rowId, at);
    return version === 'unknown' ? null : version;
  }

  /** One timer for the next version to become audible. */
  private schedule(): void {
    const next = this.feed.heard.nextMoment(this.scannedTo);
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
    feed.onHeard = () => {
      for (const { view } of this.views.values()) view.onVersion();
    };
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
      for (const row of rows) this.feed.keepVersion(feedRowId(row.kind, row.entry), row);
      this.deepDone = true;
    })().catch((err: unknown) => {
      this.deep = null;
      this.logger.warn({ err, stationId: this.feed.stationId }, 'could not read the station’s recent now-playing and on-air history');
      throw err;
    });
    return this.deep;
  }
}
