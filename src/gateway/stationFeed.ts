import { FEED_HISTORY_MS, feedRowId, FEED_KINDS, stationChannel, type FeedAction, type FeedKind } from '../feed/names.ts';
import type { Logger } from '../lib/logger.ts';
import { channelKey, segmentOf, type Position } from './cursor.ts';
import { eventFrame, payloadJson } from './frames.ts';
import { nowPlayingAt } from '../domains/nowPlaying/presenter.ts';
import type { NowPlaying } from '../domains/nowPlaying/schemas.ts';
import type { FeedStore, StoredRow } from './store.ts';
import { DELAYED_KINDS, HeardHistory, heardPayload, momentOf, type HeardVersion } from './heard.ts';

/** Content rows a new connection receives (decisions.md: "the 20 most recently published"). */
export const SNAPSHOT_CONTENT_ROWS = 20;
/** Content rows held with their data, so a few unpublished ones never leave the snapshot short. */
const CONTENT_BODIES = 50;
/** How long a hole in the sequence may stay open before the gateway reads the missed rows itself. */
const GAP_REPAIR_MS = 250;
/** Delay before retrying a catch-up that failed (Postgres unreachable). */
const CATCH_UP_RETRY_MS = 1000;

export interface HeldRow {
  rowId: string;
  seq: number;
  updatedAt: string;
  payload: string;
  /** The now-playing row's data, re-derived at send time for the snapshot (`nowPlayingAt`)… */
  nowPlaying?: NowPlaying;
  /** …and the moment its age counts from (epoch ms). */
  nowPlayingMoment?: number;
}

/** How long content bodies read for a resume stay (a reconnect burst spreads over a few seconds). */
const FETCHED_BODIES_MS = 60_000;
/** How often the in-memory tombstones are checked against the history window. */
const PRUNE_EVERY_MS = 60_000;

/** One event of a station's feed, before it is framed with a connection's cursor. */
export interface FeedChange {
  rowId: string;
  action: FeedAction;
  updatedAt: string;
  payload: string;
  seq: number;
}

/** Whether a connection at a position can be given only what changed since (cursor.ts). */
export type ResumeCheck = 'resumable' | 'reset' | 'ahead';

/**
 * The delayed rows (now-playing, on-air) of a connection with `stream=` (delay.ts): the version its
 * listeners hear, framed at heard time.
 */
export interface DelayedRows {
  /** The version a listener of the stream holds now (null: none yet). */
  row(rowId: string): HeardVersion | null;
  /** On a resume: whether the client at its cursor's position lacks the version it should hold now. */
  changedSince(rowId: string): boolean;
  heardAt: number;
  latencyMs: number;
}

const NOW_PLAYING_ROW = feedRowId('now-playing', 'current');

const FIXED_ORDER = new Map<string, number>(FEED_KINDS.map((kind, i) => [kind, i]));

/** The last generation handed out (`StationFeed.generation`): one sequence for every feed, so two never share one. */
let generations = 0;
/** A new generation (delay.ts numbers its views' generations from the same sequence). */
export const nextGeneration = (): number => ++generations;

/**
 * The current feed rows of one station, kept warm from the bus, and the sequence bookkeeping that makes
 * sure no change is lost.
 *
 * Every row carries the station's `seq`; writes to one station commit in `seq` order. `watermark` is the
 * highest seq up to which every change has been applied. A bus message beyond `watermark + 1` is applied
 * at once (rows are whole values, so order only matters per row, and a per-row seq check drops stale
 * ones) and leaves a hole; a hole still open after GAP_REPAIR_MS, or a lost Redis subscription, triggers
 * a catch-up read of the rows changed after `watermark`, which are sent like live changes.
 */
export class StationFeed {
  readonly stationId: string;
  /** The public channel, also the uWS topic its sockets subscribe to. */
  readonly topic: string;
  /** The channel's key in cursors. */
  readonly key: string;
  private readonly store: FeedStore;
  private readonly publish: (change: FeedChange) => void;
  private readonly logger: Logger;
  /** schedule, on-air, now-playing rows (always held with data). */
  private readonly fixed = new Map<string, HeldRow>();
  /** seq of every live content row, held or not. */
  private readonly contentSeq = new Map<string, number>();
  /** The most recent content rows with their data (at most CONTENT_BODIES). */
  private readonly contentBodies = new Map<string, HeldRow>();
  /** Removed rows whose seq is above the watermark: a late, older message must not bring them back. */
  private readonly tombstones = new Map<string, number>();
  /** Every tombstone of the history (rowId → seq, time): what a resuming client must be told was removed. */
  private readonly deletions = new Map<string, { seq: number; updatedAt: string }>();
  /** Content bodies read for resuming clients (rows older than the held bodies), while a burst lasts. */
  private readonly fetched = new Map<string, HeldRow>();
  private fetchedTimer: NodeJS.Timeout | null = null;
  private bodyRead: Promise<void> | null = null;
  private bodyReadFrom = Infinity;
  private queuedRead: Promise<void> | null = null;
  private queuedFrom = Infinity;
  private epoch = '';
  /** The highest seq whose tombstone is no longer kept: positions below it are resets. */
  private prunedSeq = 0;
  private prunedAt = 0;
  private readonly ahead = new Set<number>();
  private watermark = 0;
  private loaded = false;
  private closed = false;
  private buffered: StoredRow[] = [];
  // Frames are held and sent as UTF-8 buffers: uWS then copies bytes instead of converting a JS string
  // for every socket (which also left native memory behind per connection).
  /** Framed state and replays by (now-playing age, what, cursor); emptied whenever a row changes. */
  private readonly frameCache = new Map<string, Buffer[]>();
  /** `canReplay` answers by position; emptied with the frame cache. */
  private readonly replayable = new Map<number, boolean>();
  private segmentCache = '';
  private segmentSeq = -1;
  private segmentMask = -1;
  private repairTimer: NodeJS.Timeout | null = null;
  private catchingUp: Promise<void> | null = null;
  private catchUpAgain = false;
  private refilling = false;
  private catchUpAfterLoad = false;
  /** Kinds whose module the station has switched off: held and accounted for, never sent. */
  private hidden: ReadonlySet<string> = new Set<FeedKind>();
  private gen = ++generations;
  private genAge: number | null = null;
  /** The recent versions of the now-playing and on-air rows, for connections with `stream=` (delay.ts). */
  readonly heard = new HeardHistory();
  /** Told when a version of a delayed row was applied (the station's delayed views). */
  onHeard: () => void = () => {};

  constructor(stationId: string, store: FeedStore, publish: (change: FeedChange) => void, logger: Logger) {
    this.stationId = stationId;
    this.topic = stationChannel(stationId);
    this.key = channelKey(this.topic);
    this.store = store;
    this.publish = publish;
    this.logger = logger;
  }

  /** Reads the current rows; bus messages that arrived meanwhile are applied afterwards. */
  async load(): Promise<void> {
    const current = await this.store.currentRows(this.stationId, CONTENT_BODIES);
    if (this.closed) return;
    this.hidden = new Set(current.hidden);
    for (const row of current.rows) this.hold(row);
    this.watermark = current.feedSeq ?? 0;
    this.epoch = current.history?.epoch ?? '';
    this.prunedSeq = current.history?.prunedSeq ?? 0;
    this.loaded = true;
    this.changed();
    const buffered = this.buffered;
    this.buffered = [];
    for (const row of buffered) this.receive(row);
    if (this.catchUpAfterLoad) void this.catchUp();
  }

  /** A change from the bus. */
  receive(row: StoredRow): void {
    if (this.closed) return;
    if (!this.loaded) {
      this.buffered.push(row);
      return;
    }
    const change = this.apply(row);
    if (change !== null && !this.hidden.has(row.kind)) this.publish(change);
  }

  /**
   * Re-reads which kinds the station's modules switch off (after an admin change); true when that
   * changed — the station's open connections then hold a state this feed no longer matches.
   */
  async refreshHiddenKinds(): Promise<boolean> {
    const hidden = await this.store.hiddenKinds(this.stationId);
    if (this.closed || hidden === null) return false;
    const next = new Set<string>(hidden);
    if (next.size === this.hidden.size && [...next].every((kind) => this.hidden.has(kind))) return false;
    this.hidden = next;
    this.clearCaches();
    return true;
  }

  /** Reads and sends every row changed after the watermark (after a lost subscription or a hole). */
  catchUp(): Promise<void> {
    if (!this.loaded) {
      // The initial read may predate the lost subscription: catch up once it is in.
      this.catchUpAfterLoad = true;
      return Promise.resolve();
    }
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return this.catchingUp;
    }
    this.clearRepairTimer();
    this.catchingUp = (async () => {
      do {
        this.catchUpAgain = false;
        const missed = await this.store.rowsSince(this.stationId, this.watermark);
        if (this.closed) return;
        for (const row of missed.rows) this.receive(row);
        if (missed.feedSeq !== null) this.raiseWatermark(missed.feedSeq);
      } while (this.catchUpAgain && !this.closed);
    })()
      .catch((err: unknown) => {
        this.logger.warn({ err, stationId: this.stationId }, 'feed catch-up failed; retrying');
        if (!this.closed) this.repairTimer = setTimeout(() => void this.catchUp(), CATCH_UP_RETRY_MS);
      })
      .finally(() => {
        this.catchingUp = null;
      });
    return this.catchingUp;
  }

  /** The station's position as a cursor names it: every change up to the watermark is applied. */
  position(): Position {
    return { epoch: this.epoch, seq: this.watermark, mask: this.hiddenMask() };
  }

  /**
   * A number that changes whenever what a connection's start is built from may have changed: a row, the
   * watermark, the modules, the pruned history, the now-playing row's age in whole seconds. Sessions keep
   * a start they built while it stays the same (session.ts).
   */
  generation(now = Date.now()): number {
    this.pruneDeletions(now);
    const age = this.nowPlayingAge(now);
    if (age !== this.genAge) {
      this.genAge = age;
      this.changed();
    }
    return this.gen;
  }

  /** This channel's cursor segment at the current position. */
  segment(): string {
    const mask = this.hiddenMask();
    if (this.segmentSeq !== this.watermark || this.segmentMask !== mask) {
      this.segmentCache = segmentOf(this.key, this.position());
      this.segmentSeq = this.watermark;
      this.segmentMask = mask;
    }
    return this.segmentCache;
  }

  /**
   * Whether a client at `position` can be given only the changes since: same epoch and module settings,
   * not below the pruned history. A position ahead of this gateway (a change another node has sent and
   * this one has not applied yet) is `ahead`: catch up, then ask again.
   */
  check(position: Position, delayed = false): ResumeCheck {
    this.pruneDeletions(Date.now());
    if (!this.loaded || position.epoch !== this.epoch || position.mask !== this.hiddenMask()) return 'reset';
    // A position in a delayed timeline (a connection with `stream=`) names no live position of those rows.
    if (position.heard !== undefined && !delayed) return 'reset';
    if (position.seq < this.prunedSeq) return 'reset';
    return position.seq > this.watermark ? 'ahead' : 'resumable';
  }

  /**
   * One `create` event per current row: schedule, on-air, now-playing, then the newest content first,
   * each framed with `cursor`. The now-playing row's elapsed time and freshness are derived again at
   * `now` (the stored row says what they were when it was written).
   */
  stateFrames(cursor: string, now = Date.now(), delayed?: DelayedRows): Buffer[] {
    const build = (): Buffer[] => {
      const fixed: HeldRow[] = [];
      for (const row of this.fixed.values()) {
        if (this.hidden.has(kindOf(row.rowId))) continue;
        if (!delayed || !DELAYED_KINDS.has(kindOf(row.rowId))) fixed.push(row);
      }
      if (delayed)
        for (const rowId of this.heard.rowIds()) {
          const version = this.hidden.has(kindOf(rowId)) ? null : delayed.row(rowId);
          if (version && !version.deleted) fixed.push(version);
        }
      fixed.sort((a, b) => (FIXED_ORDER.get(kindOf(a.rowId)) ?? 9) - (FIXED_ORDER.get(kindOf(b.rowId)) ?? 9));
      const content = this.hidden.has('content')
        ? []
        : [...this.contentBodies.values()].sort((a, b) => b.seq - a.seq).slice(0, SNAPSHOT_CONTENT_ROWS);
      return [...fixed, ...content].map((row) => this.frameOf(row, 'create', cursor, now, delayed));
    };
    // A delayed state is at a heard time of its own (it moves every millisecond): not cached.
    return delayed ? build() : this.cached(`state|${cursor}`, now, build);
  }

  /**
   * The events a client at `seq` (checked `resumable`) missed, in seq order: one `update` per row changed
   * since with its current data, one `delete` per row removed since. Null when the data of an older
   * content row has to be read first (`readBodies`).
   */
  replayFrames(seq: number, cursor: string, now = Date.now(), delayed?: DelayedRows): Buffer[] | null {
    const key = `${this.nowPlayingAge(now)}|since ${seq}|${cursor}`;
    const hit = delayed ? undefined : this.frameCache.get(key);
    if (hit) return hit;
    const changed: Array<{ seq: number; frame: () => Buffer }> = [];
    for (const row of this.fixed.values())
      if (row.seq > seq && !this.hidden.has(kindOf(row.rowId)) && !(delayed && DELAYED_KINDS.has(kindOf(row.rowId))))
        changed.push({ seq: row.seq, frame: () => this.frameOf(row, 'update', cursor, now) });
    if (delayed)
      for (const rowId of this.heard.rowIds()) {
        const version = delayed.row(rowId);
        if (!version || version.deleted || this.hidden.has(kindOf(rowId)) || !delayed.changedSince(rowId)) continue;
        changed.push({ seq: version.seq, frame: () => this.frameOf(version, 'update', cursor, now, delayed) });
      }
    if (!this.hidden.has('content'))
      for (const [rowId, rowSeq] of this.contentSeq) {
        if (rowSeq <= seq) continue;
        const body = this.contentBodies.get(rowId) ?? this.fetched.get(rowId);
        if (!body || body.seq !== rowSeq) return null;
        changed.push({ seq: rowSeq, frame: () => this.frameOf(body, 'update', cursor, now) });
      }
    for (const [rowId, removed] of this.deletions) {
      const kind = kindOf(rowId) as FeedKind;
      if (removed.seq <= seq || this.hidden.has(kind) || (delayed && DELAYED_KINDS.has(kind))) continue;
      const payload = payloadJson(this.stationId, { kind, entry: rowId.slice(kind.length + 1), data: null, updatedAt: removed.updatedAt });
      changed.push({
        seq: removed.seq,
        frame: () => Buffer.from(eventFrame(this.stationId, rowId, 'delete', removed.updatedAt, payload, cursor)),
      });
    }
    changed.sort((a, b) => a.seq - b.seq);
    const frames = changed.map((c) => c.frame());
    if (!delayed) this.keep(key, frames);
    return frames;
  }

  /** `replayFrames` from a cursor's position (session.ts treats live feeds and delayed views alike). */
  replayAt(position: Position, cursor: string, now = Date.now()): Buffer[] | null {
    return this.replayFrames(position.seq, cursor, now);
  }

  /** Whether `replayFrames(seq)` can answer from memory (every content row changed since has its body here). */
  canReplay(seq: number): boolean {
    if (this.hidden.has('content')) return true;
    const known = this.replayable.get(seq);
    if (known !== undefined) return known;
    let answer = true;
    for (const [rowId, rowSeq] of this.contentSeq) {
      if (rowSeq <= seq) continue;
      const body = this.contentBodies.get(rowId) ?? this.fetched.get(rowId);
      if (!body || body.seq !== rowSeq) {
        answer = false;
        break;
      }
    }
    if (this.replayable.size >= 32) this.replayable.clear();
    this.replayable.set(seq, answer);
    return answer;
  }

  /**
   * Reads the bodies of content rows changed after `seq` that this gateway does not hold. Calls of one
   * burst share reads: one already running that covers `seq` is joined; otherwise one queued read covers
   * the lowest position asked while it waits for its turn.
   */
  readBodies(seq: number): Promise<void> {
    if (this.bodyRead && this.bodyReadFrom <= seq) return this.bodyRead;
    this.queuedFrom = Math.min(this.queuedFrom, seq);
    this.queuedRead ??= (async () => {
      // Everything asked before this read starts is part of it: wait for the running read, or one turn.
      if (this.bodyRead) await this.bodyRead.catch(() => {});
      else await new Promise((resolve) => setImmediate(resolve));
      const from = this.queuedFrom;
      this.queuedRead = null;
      this.queuedFrom = Infinity;
      this.bodyReadFrom = from;
      const read = this.store.contentSince(this.stationId, from).then((rows) => {
        for (const row of rows) {
          const rowId = feedRowId(row.kind, row.entry);
          if (this.contentSeq.get(rowId) !== row.seq || this.contentBodies.has(rowId)) continue;
          this.fetched.set(rowId, this.heldOf(rowId, row));
        }
        this.clearCaches();
        if (this.fetchedTimer) clearTimeout(this.fetchedTimer);
        this.fetchedTimer = setTimeout(() => {
          this.fetched.clear();
          this.fetchedTimer = null;
        }, FETCHED_BODIES_MS);
        this.fetchedTimer.unref();
      });
      this.bodyRead = read;
      try {
        await read;
      } finally {
        if (this.bodyRead === read) {
          this.bodyRead = null;
          this.bodyReadFrom = Infinity;
        }
      }
    })();
    return this.queuedRead;
  }

  private cached(key: string, now: number, build: () => Buffer[]): Buffer[] {
    const full = `${this.nowPlayingAge(now)}|${key}`;
    const hit = this.frameCache.get(full);
    if (hit) return hit;
    const frames = build();
    this.keep(full, frames);
    return frames;
  }

  private clearCaches(): void {
    this.frameCache.clear();
    this.replayable.clear();
    this.changed();
  }

  private changed(): void {
    this.gen = ++generations;
  }

  private keep(key: string, frames: Buffer[]): void {
    if (this.frameCache.size >= 32) this.clearCaches();
    this.frameCache.set(key, frames);
  }

  /** The now-playing row's age in whole seconds (its frames are derived again when it changes); null when it has none. */
  private nowPlayingAge(now: number): number | null {
    const nowPlaying = this.hidden.has('now-playing') ? undefined : this.fixed.get(NOW_PLAYING_ROW);
    return nowPlaying?.nowPlayingMoment === undefined ? null : Math.floor((now - nowPlaying.nowPlayingMoment) / 1000);
  }

  private frameOf(row: HeldRow, action: FeedAction, cursor: string, now: number, delayed?: DelayedRows): Buffer {
    if (delayed && DELAYED_KINDS.has(kindOf(row.rowId))) {
      const payload = heardPayload(this.stationId, row as HeardVersion, delayed.heardAt, delayed.latencyMs);
      return Buffer.from(eventFrame(this.stationId, row.rowId, action, row.updatedAt, payload, cursor));
    }
    const payload =
      row.rowId === NOW_PLAYING_ROW && row.nowPlaying && row.nowPlayingMoment !== undefined
        ? payloadJson(this.stationId, {
            kind: 'now-playing',
            entry: 'current',
            data: nowPlayingAt(row.nowPlaying, new Date(now)),
            updatedAt: row.updatedAt,
          })
        : row.payload;
    return Buffer.from(eventFrame(this.stationId, row.rowId, action, row.updatedAt, payload, cursor));
  }

  /** Whether the station's modules switch this kind of row off (held, never sent). */
  isHidden(kind: string): boolean {
    return this.hidden.has(kind);
  }

  private hiddenMask(): number {
    let mask = 0;
    for (const [i, kind] of FEED_KINDS.entries()) if (this.hidden.has(kind)) mask |= 1 << i;
    return mask;
  }

  /** Forgets tombstones older than the history window, as the hourly prune does in Postgres. */
  private pruneDeletions(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    const horizon = now - FEED_HISTORY_MS;
    for (const [rowId, removed] of this.deletions)
      if (Date.parse(removed.updatedAt) < horizon) {
        this.deletions.delete(rowId);
        this.prunedSeq = Math.max(this.prunedSeq, removed.seq);
        this.clearCaches();
      }
  }

  close(): void {
    this.closed = true;
    this.changed();
    this.clearRepairTimer();
    if (this.fetchedTimer) clearTimeout(this.fetchedTimer);
  }

  /** Applies a change; returns the event to send, or null when it is already reflected or stale. */
  private apply(row: StoredRow): FeedChange | null {
    if (row.seq <= this.watermark) return null;
    const rowId = feedRowId(row.kind, row.entry);
    const known = row.kind === 'content' ? this.contentSeq.get(rowId) : this.fixed.get(rowId)?.seq;
    const lastSeq = known ?? this.tombstones.get(rowId) ?? 0;
    this.account(row.seq);
    if (row.seq <= lastSeq) return null;
    const action: FeedAction = row.deleted ? 'delete' : known === undefined ? 'create' : 'update';
    const held = this.hold(row);
    const payload =
      held?.payload ?? payloadJson(this.stationId, { kind: row.kind, entry: row.entry, data: null, updatedAt: row.updatedAt });
    return { rowId, action, updatedAt: row.updatedAt, payload, seq: row.seq };
  }

  /** Puts a row into the current state (or takes it out); returns the held row. */
  private hold(row: StoredRow): HeldRow | null {
    const rowId = feedRowId(row.kind, row.entry);
    this.clearCaches();
    this.fetched.delete(rowId);
    if (DELAYED_KINDS.has(row.kind)) this.keepVersion(rowId, row);
    if (row.deleted) {
      this.fixed.delete(rowId);
      this.contentSeq.delete(rowId);
      this.contentBodies.delete(rowId);
      this.tombstones.set(rowId, row.seq);
      this.deletions.set(rowId, { seq: row.seq, updatedAt: row.updatedAt });
      this.refillIfShort();
      return null;
    }
    this.tombstones.delete(rowId);
    this.deletions.delete(rowId);
    if (row.kind === 'content') {
      this.contentSeq.set(rowId, row.seq);
      this.contentBodies.delete(rowId);
      if (row.data === undefined) return null;
    }
    const held = this.heldOf(rowId, row);
    if (row.kind !== 'content') {
      this.fixed.set(rowId, held);
      return held;
    }
    this.contentBodies.set(rowId, held);
    if (this.contentBodies.size > CONTENT_BODIES) this.dropOldestBody();
    return held;
  }

  /** Adds a version of a delayed row to the history; the station's delayed views then release what is due. */
  keepVersion(rowId: string, row: StoredRow): void {
    const held = row.deleted
      ? { rowId, seq: row.seq, updatedAt: row.updatedAt, payload: payloadJson(this.stationId, { ...row, data: null }) }
      : this.heldOf(rowId, row);
    const silent = !row.deleted && row.data === null;
    const version: HeardVersion = { ...held, moment: momentOf(row.kind, row.data, row.updatedAt), deleted: row.deleted, silent };
    if (this.heard.add(version) && this.loaded) this.onHeard();
  }

  private heldOf(rowId: string, row: StoredRow): HeldRow {
    const held: HeldRow = { rowId, seq: row.seq, updatedAt: row.updatedAt, payload: payloadJson(this.stationId, row) };
    if (rowId === NOW_PLAYING_ROW && isNowPlaying(row.data) && row.data.track) {
      const moment = Date.parse(row.data.freshness.observedAt ?? row.data.freshness.receivedAt ?? '');
      if (!Number.isNaN(moment)) {
        held.nowPlaying = row.data;
        held.nowPlayingMoment = moment;
      }
    }
    return held;
  }

  private dropOldestBody(): void {
    let oldest: HeldRow | null = null;
    for (const held of this.contentBodies.values()) if (!oldest || held.seq < oldest.seq) oldest = held;
    if (oldest) this.contentBodies.delete(oldest.rowId);
  }

  /** After removals, fetch the data of older content rows so new connections still get 20 of them. */
  private refillIfShort(): void {
    if (!this.loaded || this.refilling || this.contentBodies.size >= SNAPSHOT_CONTENT_ROWS) return;
    if (this.contentSeq.size <= this.contentBodies.size) return;
    this.refilling = true;
    this.store
      .recentContent(this.stationId, CONTENT_BODIES)
      .then((rows) => {
        for (const row of rows) {
          const rowId = feedRowId(row.kind, row.entry);
          // Only a row whose seq we still hold as current: anything else changed since the read.
          if (this.contentSeq.get(rowId) !== row.seq || this.contentBodies.has(rowId)) continue;
          this.hold(row);
        }
      })
      .catch((err: unknown) => this.logger.warn({ err, stationId: this.stationId }, 'content refill failed'))
      .finally(() => {
        this.refilling = false;
      });
  }

  private account(seq: number): void {
    if (seq === this.watermark + 1) this.raiseWatermark(seq);
    else if (seq > this.watermark) this.ahead.add(seq);
    this.scheduleRepair();
  }

  private raiseWatermark(seq: number): void {
    if (seq <= this.watermark) return;
    this.watermark = seq;
    this.changed();
    for (const s of this.ahead) if (s <= seq) this.ahead.delete(s);
    while (this.ahead.delete(this.watermark + 1)) this.watermark++;
    for (const [rowId, s] of this.tombstones) if (s <= this.watermark) this.tombstones.delete(rowId);
    this.scheduleRepair();
  }

  private scheduleRepair(): void {
    if (this.ahead.size === 0) {
      this.clearRepairTimer();
      return;
    }
    if (this.repairTimer || this.catchingUp || this.closed) return;
    this.repairTimer = setTimeout(() => {
      this.repairTimer = null;
      void this.catchUp();
    }, GAP_REPAIR_MS);
  }

  private clearRepairTimer(): void {
    if (this.repairTimer) clearTimeout(this.repairTimer);
    this.repairTimer = null;
  }
}

const kindOf = (rowId: string): string => rowId.slice(0, rowId.indexOf(':'));

/** A now-playing row as the web and worker write it (presentNowPlaying); anything else is sent as stored. */
function isNowPlaying(data: unknown): data is NowPlaying {
  const d = data as Partial<NowPlaying> | null;
  return !!d && typeof d === 'object' && typeof d.freshness === 'object' && d.freshness !== null && 'track' in d;
}
