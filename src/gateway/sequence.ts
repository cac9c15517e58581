import type { Logger } from '../lib/logger.ts';
import type { RowsAtSeq, StoredRow } from './store.ts';

/** How long a hole in the sequence may stay open before the gateway reads the missed rows itself. */
const GAP_REPAIR_MS = 250;
/** Delay before retrying a catch-up that failed (Postgres unreachable). */
const CATCH_UP_RETRY_MS = 1000;

/** What the sequence asks of its station's feed. */
export interface SequenceDeps {
  stationId: string;
  logger: Logger;
  /** The rows changed after a seq (Postgres). */
  rowsSince(after: number): Promise<RowsAtSeq>;
  /** Applies a row read by a catch-up as if it came from the bus. */
  receive(row: StoredRow): void;
  /** The watermark rose: tombstones at or below it are no longer needed. */
  raised(watermark: number): void;
}

/**
 * The sequence bookkeeping of one station that makes sure no change is lost.
 *
 * Every row carries the station's `seq`; writes to one station commit in `seq` order. `watermark` is the
 * highest seq up to which every change has been applied. A bus message beyond `watermark + 1` is applied
 * at once (rows are whole values, so order only matters per row, and a per-row seq check drops stale
 * ones) and leaves a hole; a hole still open after GAP_REPAIR_MS, or a lost Redis subscription, triggers
 * a catch-up read of the rows changed after `watermark`, which are sent like live changes.
 */
export class FeedSequence {
  private readonly deps: SequenceDeps;
  private readonly ahead = new Set<number>();
  private current = 0;
  private repairTimer: NodeJS.Timeout | null = null;
  private catchingUp: Promise<void> | null = null;
  private catchUpAgain = false;
  private closed = false;

  constructor(deps: SequenceDeps) {
    this.deps = deps;
  }

  /** Every change up to this seq is applied. */
  get watermark(): number {
    return this.current;
  }

  /** The position of the initial read. */
  start(feedSeq: number): void {
    this.current = feedSeq;
  }

  /** A change of this seq was received (applied, or found stale). */
  account(seq: number): void {
    if (seq === this.current + 1) this.raise(seq);
    else if (seq > this.current) this.ahead.add(seq);
    this.scheduleRepair();
  }

  /** Reads and applies every row changed after the watermark (after a lost subscription or a hole). */
  catchUp(): Promise<void> {
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return this.catchingUp;
    }
    this.clearRepairTimer();
    this.catchingUp = (async () => {
      do {
        this.catchUpAgain = false;
        const missed = await this.deps.rowsSince(this.current);
        if (this.closed) return;
        for (const row of missed.rows) this.deps.receive(row);
        if (missed.feedSeq !== null) this.raise(missed.feedSeq);
      } while (this.catchUpAgain && !this.closed);
    })()
      .catch((err: unknown) => {
        this.deps.logger.warn({ err, stationId: this.deps.stationId }, 'feed catch-up failed; retrying');
        if (!this.closed) this.repairTimer = setTimeout(() => void this.catchUp(), CATCH_UP_RETRY_MS);
      })
      .finally(() => {
        this.catchingUp = null;
      });
    return this.catchingUp;
  }

  close(): void {
    this.closed = true;
    this.clearRepairTimer();
  }

  private raise(seq: number): void {
    if (seq <= this.current) return;
    this.current = seq;
    for (const s of this.ahead) if (s <= seq) this.ahead.delete(s);
    while (this.ahead.delete(this.current + 1)) this.current++;
    this.deps.raised(this.current);
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
