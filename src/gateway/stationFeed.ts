import { feedRowId, FEED_KINDS, stationChannel, type FeedAction, type FeedKind } from '../feed/names.ts';
import type { Logger } from '../lib/logger.ts';
import { eventFrame, payloadJson } from './frames.ts';
import { nowPlayingAt } from '../domains/nowPlaying/presenter.ts';
import type { NowPlaying } from '../domains/nowPlaying/schemas.ts';
import type { FeedStore, StoredRow } from './store.ts';

/** Content rows a new connection receives (decisions.md: "the 20 most recently published"). */
export const SNAPSHOT_CONTENT_ROWS = 20;
/** Content rows held with their data, so a few unpublished ones never leave the snapshot short. */
const CONTENT_BODIES = 50;
/** How long a hole in the sequence may stay open before the gateway reads the missed rows itself. */
const GAP_REPAIR_MS = 250;
/** Delay before retrying a catch-up that failed (Postgres unreachable). */
const CATCH_UP_RETRY_MS = 1000;

interface HeldRow {
  rowId: string;
  seq: number;
  updatedAt: string;
  payload: string;
  /** The now-playing row's data, re-derived at send time for the snapshot (`nowPlayingAt`)… */
  nowPlaying?: NowPlaying;
  /** …and the moment its age counts from (epoch ms). */
  nowPlayingMoment?: number;
}

const NOW_PLAYING_ROW = feedRowId('now-playing', 'current');

const FIXED_ORDER = new Map<string, number>(FEED_KINDS.map((kind, i) => [kind, i]));

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
  private readonly store: FeedStore;
  private readonly publish: (frame: Buffer) => void;
  private readonly logger: Logger;
  /** schedule, on-air, now-playing rows (always held with data). */
  private readonly fixed = new Map<string, HeldRow>();
  /** seq of every live content row, held or not. */
  private readonly contentSeq = new Map<string, number>();
  /** The most recent content rows with their data (at most CONTENT_BODIES). */
  private readonly contentBodies = new Map<string, HeldRow>();
  /** Removed rows whose seq is above the watermark: a late, older message must not bring them back. */
  private readonly tombstones = new Map<string, number>();
  private readonly ahead = new Set<number>();
  private watermark = 0;
  private loaded = false;
  private closed = false;
  private buffered: StoredRow[] = [];
  // Frames are held and sent as UTF-8 buffers: uWS then copies bytes instead of converting a JS string
  // for every socket (which also left native memory behind per connection).
  private snapshotFrames: Buffer[] | null = null;
  /** The now-playing age (whole seconds) the snapshot was derived at; null when it has no row that ages. */
  private snapshotAge: number | null = null;
  private repairTimer: NodeJS.Timeout | null = null;
  private catchingUp: Promise<void> | null = null;
  private catchUpAgain = false;
  private refilling = false;
  private catchUpAfterLoad = false;
  /** Kinds whose module the station has switched off: held and accounted for, never sent. */
  private hidden: ReadonlySet<string> = new Set<FeedKind>();

  constructor(stationId: string, store: FeedStore, publish: (frame: Buffer) => void, logger: Logger) {
    this.stationId = stationId;
    this.topic = stationChannel(stationId);
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
    const frame = this.apply(row);
    if (frame !== null && !this.hidden.has(row.kind)) this.publish(frame);
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
    this.snapshotFrames = null;
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

  /**
   * One `create` event per current row: schedule, on-air, now-playing, then the newest content first.
   * The now-playing row's elapsed time and freshness are derived again at `now` (the stored row says
   * what they were when it was written); the frames are reused while its age in whole seconds holds.
   */
  snapshot(now = Date.now()): Buffer[] {
    const nowPlaying = this.hidden.has('now-playing') ? undefined : this.fixed.get(NOW_PLAYING_ROW);
    const age = nowPlaying?.nowPlayingMoment === undefined ? null : Math.floor((now - nowPlaying.nowPlayingMoment) / 1000);
    if (this.snapshotFrames && this.snapshotAge === age) return this.snapshotFrames;
    const fixed = [...this.fixed.values()]
      .filter((row) => !this.hidden.has(kindOf(row.rowId)))
      .sort((a, b) => (FIXED_ORDER.get(kindOf(a.rowId)) ?? 9) - (FIXED_ORDER.get(kindOf(b.rowId)) ?? 9));
    const content = this.hidden.has('content')
      ? []
      : [...this.contentBodies.values()].sort((a, b) => b.seq - a.seq).slice(0, SNAPSHOT_CONTENT_ROWS);
    this.snapshotAge = age;
    this.snapshotFrames = [...fixed, ...content].map((row) => {
      const payload =
        row === nowPlaying && row.nowPlaying && age !== null
          ? payloadJson(this.stationId, {
              kind: 'now-playing',
              entry: 'current',
              data: nowPlayingAt(row.nowPlaying, new Date(now)),
              updatedAt: row.updatedAt,
            })
          : row.payload;
      return Buffer.from(eventFrame(this.stationId, row.rowId, 'create', row.updatedAt, payload));
    });
    return this.snapshotFrames;
  }

  close(): void {
    this.closed = true;
    this.clearRepairTimer();
  }

  /** Applies a change; returns the frame to send, or null when it is already reflected or stale. */
  private apply(row: StoredRow): Buffer | null {
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
    return Buffer.from(eventFrame(this.stationId, rowId, action, row.updatedAt, payload));
  }

  /** Puts a row into the current state (or takes it out); returns the held row. */
  private hold(row: StoredRow): HeldRow | null {
    const rowId = feedRowId(row.kind, row.entry);
    this.snapshotFrames = null;
    if (row.deleted) {
      this.fixed.delete(rowId);
      this.contentSeq.delete(rowId);
      this.contentBodies.delete(rowId);
      this.tombstones.set(rowId, row.seq);
      this.refillIfShort();
      return null;
    }
    this.tombstones.delete(rowId);
    if (row.kind === 'content') {
      this.contentSeq.set(rowId, row.seq);
      this.contentBodies.delete(rowId);
      if (row.data === undefined) return null;
    }
    const held: HeldRow = { rowId, seq: row.seq, updatedAt: row.updatedAt, payload: payloadJson(this.stationId, row) };
    if (rowId === NOW_PLAYING_ROW && isNowPlaying(row.data) && row.data.track) {
      const moment = Date.parse(row.data.freshness.observedAt ?? row.data.freshness.receivedAt ?? '');
      if (!Number.isNaN(moment)) {
        held.nowPlaying = row.data;
        held.nowPlayingMoment = moment;
      }
    }
    if (row.kind !== 'content') {
      this.fixed.set(rowId, held);
      return held;
    }
    this.contentBodies.set(rowId, held);
    if (this.contentBodies.size > CONTENT_BODIES) this.dropOldestBody();
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
