import { feedRowId, stationChannel } from '../feed/names.ts';
import type { Logger } from '../lib/logger.ts';
import { channelKey, segmentOf, type Position } from './cursor.ts';
import { FrameCache, LIVE, replayFrames, stateFrames } from './feedFrames.ts';
import { ageAt, NOW_PLAYING_ROW } from './rowVersion.ts';
import { FeedSequence } from './sequence.ts';
import { StationRows, type FeedChange } from './stationRows.ts';
import type { FeedStore, StoredRow } from './store.ts';
import { CONTENT_BODIES } from './contentBodies.ts';

export type { FeedChange } from './stationRows.ts';
export { SNAPSHOT_CONTENT_ROWS } from './contentBodies.ts';

/** Whether a connection at a position can be given only what changed since (cursor.ts). */
export type ResumeCheck = 'resumable' | 'reset' | 'ahead';

/** The last generation handed out (`StationFeed.generation`): one sequence for every feed, so two never share one. */
let generations = 0;
/** A new generation (delay.ts numbers its views' generations from the same sequence). */
export const nextGeneration = (): number => ++generations;

/**
 * One station's feed on this gateway: its rows (StationRows, the history every view reads), kept warm
 * from the bus with no change lost (FeedSequence), and the live view of them — the rows as they are now,
 * which a connection without `stream=` starts from and resumes in. Delayed views (delay.ts) read the same
 * rows at their own heard time.
 */
export class StationFeed {
  readonly stationId: string;
  /** The public channel, also the uWS topic its sockets subscribe to. */
  readonly topic: string;
  /** The channel's key in cursors. */
  readonly key: string;
  /** The station's row history (the delayed views read it too). */
  readonly rows: StationRows;
  private readonly store: FeedStore;
  private readonly publish: (change: FeedChange) => void;
  private readonly sequence: FeedSequence;
  private loaded = false;
  private closed = false;
  private buffered: StoredRow[] = [];
  private catchUpAfterLoad = false;
  /** Framed states and replays by (now-playing age, what, cursor). */
  private readonly frames = new FrameCache();
  private segmentCache = '';
  private segmentSeq = -1;
  private segmentMask = -1;
  private gen = nextGeneration();
  // What `gen` was handed out for: the rows' revision, the watermark, the now-playing age.
  private genRevision = -1;
  private genWatermark = -1;
  private genAge: number | null = null;

  constructor(stationId: string, store: FeedStore, publish: (change: FeedChange) => void, logger: Logger) {
    this.stationId = stationId;
    this.topic = stationChannel(stationId);
    this.key = channelKey(this.topic);
    this.store = store;
    this.publish = publish;
    this.rows = new StationRows(stationId, store, logger);
    this.sequence = new FeedSequence({
      stationId,
      logger,
      rowsSince: (after) => store.rowsSince(stationId, after),
      receive: (row) => this.receive(row),
      raised: (watermark) => this.rows.forgetTombstones(watermark),
    });
  }

  /** Reads the current rows; bus messages that arrived meanwhile are applied afterwards. */
  async load(): Promise<void> {
    const current = await this.store.currentRows(this.stationId, CONTENT_BODIES);
    if (this.closed) return;
    this.rows.load(current);
    this.sequence.start(current.feedSeq ?? 0);
    this.loaded = true;
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
    if (row.seq <= this.sequence.watermark) return;
    const lastSeq = this.rows.lastSeq(feedRowId(row.kind, row.entry), row.kind);
    this.sequence.account(row.seq);
    if (row.seq <= lastSeq) return;
    const change = this.rows.apply(row);
    if (!this.rows.isHidden(row.kind)) this.publish(change);
  }

  /**
   * Re-reads which kinds the station's modules switch off (after an admin change); true when that
   * changed — the station's open connections then hold a state this feed no longer matches.
   */
  async refreshHiddenKinds(): Promise<boolean> {
    const hidden = await this.store.hiddenKinds(this.stationId);
    if (this.closed || hidden === null) return false;
    return this.rows.setHidden(hidden);
  }

  /** Reads and sends every row changed after the watermark (after a lost subscription or a hole). */
  catchUp(): Promise<void> {
    if (this.loaded) return this.sequence.catchUp();
    // The initial read may predate the lost subscription: catch up once it is in.
    this.catchUpAfterLoad = true;
    return Promise.resolve();
  }

  /** The station's position as a cursor names it: every change up to the watermark is applied. */
  position(): Position {
    return { epoch: this.rows.epoch, seq: this.sequence.watermark, mask: this.rows.hiddenMask() };
  }

  /**
   * A number that changes whenever what a connection's start is built from may have changed: a row, the
   * watermark, the modules, the pruned history, the now-playing row's age in whole seconds. Sessions keep
   * a start they built while it stays the same (session.ts).
   */
  generation(now = Date.now()): number {
    this.rows.pruneRemovals(now);
    const revision = this.rows.revision;
    const watermark = this.sequence.watermark;
    const age = this.nowPlayingAge(now);
    if (revision !== this.genRevision || watermark !== this.genWatermark || age !== this.genAge) {
      this.genRevision = revision;
      this.genWatermark = watermark;
      this.genAge = age;
      this.gen = nextGeneration();
    }
    return this.gen;
  }

  /** This channel's cursor segment at the current position. */
  segment(): string {
    const mask = this.rows.hiddenMask();
    if (this.segmentSeq !== this.sequence.watermark || this.segmentMask !== mask) {
      this.segmentCache = segmentOf(this.key, this.position());
      this.segmentSeq = this.sequence.watermark;
      this.segmentMask = mask;
    }
    return this.segmentCache;
  }

  /** A position in a delayed timeline (a connection with `stream=`) names no live position of its rows. */
  check(position: Position): ResumeCheck {
    const answer = this.checkSeq(position);
    return position.heard === undefined ? answer : 'reset';
  }

  /**
   * Whether a client at `position` can be given only the changes since, whatever its view's clock: same
   * epoch and module settings, not below the pruned history. A position ahead of this gateway (a change
   * another node has sent and this one has not applied yet) is `ahead`: catch up, then ask again.
   */
  checkSeq(position: Position): ResumeCheck {
    this.rows.pruneRemovals(Date.now());
    if (!this.loaded || position.epoch !== this.rows.epoch || position.mask !== this.rows.hiddenMask()) return 'reset';
    if (position.seq < this.rows.prunedSeq) return 'reset';
    return position.seq > this.sequence.watermark ? 'ahead' : 'resumable';
  }

  /** The rows as they are now, each framed with `cursor` (feedFrames.ts). */
  stateFrames(cursor: string, now = Date.now()): Buffer[] {
    return this.cached(`state|${cursor}`, now, () => stateFrames(this.rows, LIVE, cursor, now));
  }

  /** What a client at `position` (checked `resumable`) missed; null when older content has to be read first. */
  replayAt(position: Position, cursor: string, now = Date.now()): Buffer[] | null {
    return this.cached(`since ${position.seq}|${cursor}`, now, () => replayFrames(this.rows, LIVE, position, cursor, now));
  }

  /** Whether a replay from `seq` can answer from memory (every content row changed since has its body here). */
  canReplay(seq: number): boolean {
    return this.rows.isHidden('content') || this.rows.content.canReplay(seq);
  }

  /** Reads the bodies of content rows changed after `seq` that this gateway does not hold (shared per burst). */
  readBodies(seq: number): Promise<void> {
    return this.rows.content.readBodies(seq);
  }

  /** Whether the station's modules switch this kind of row off (held, never sent). */
  isHidden(kind: string): boolean {
    return this.rows.isHidden(kind);
  }

  close(): void {
    this.closed = true;
    this.gen = nextGeneration();
    this.sequence.close();
    this.rows.close();
  }

  private cached(key: string, now: number, build: () => Buffer[]): Buffer[];
  private cached(key: string, now: number, build: () => Buffer[] | null): Buffer[] | null;
  private cached(key: string, now: number, build: () => Buffer[] | null): Buffer[] | null {
    const full = `${this.nowPlayingAge(now)}|${key}`;
    const hit = this.frames.get(this.rows.revision, full);
    if (hit) return hit;
    const frames = build();
    if (frames) this.frames.set(full, frames);
    return frames;
  }

  /** The now-playing row's age in whole seconds (its frames are derived again when it changes); null when it has none. */
  private nowPlayingAge(now: number): number | null {
    return this.rows.isHidden('now-playing') ? null : ageAt(this.rows.current(NOW_PLAYING_ROW), now);
  }
}
