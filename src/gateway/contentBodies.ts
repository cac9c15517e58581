import { feedRowId } from '../feed/names.ts';
import type { Logger } from '../lib/logger.ts';
import { versionOf, type RowVersion } from './rowVersion.ts';
import type { FeedStore, StoredRow } from './store.ts';

/** Content rows a new connection receives (the 20 most recently published: docs/realtime.md#what-arrives). */
export const SNAPSHOT_CONTENT_ROWS = 20;
/** Content rows held with their data, so a few unpublished ones never leave the snapshot short. */
export const CONTENT_BODIES = 50;
/** How long content bodies read for a resume stay (a reconnect burst spreads over a few seconds). */
const FETCHED_BODIES_MS = 60_000;

/**
 * The content rows of one station: the seq of every live one, the data of the newest CONTENT_BODIES,
 * and the bodies of older ones read for resuming clients while a burst lasts. Reads are shared: a
 * reconnect storm costs Postgres one read per station, not one per client.
 */
export class ContentBodies {
  /** Changes whenever what a start or a replay is built from changed (StationRows.revision). */
  revision = 0;
  private readonly stationId: string;
  private readonly store: FeedStore;
  private readonly logger: Logger;
  /** seq of every live content row, held or not. */
  private readonly seqs = new Map<string, number>();
  /** The most recent content rows with their data (at most CONTENT_BODIES). */
  private readonly held = new Map<string, RowVersion>();
  /** Content bodies read for resuming clients (rows older than the held bodies), while a burst lasts. */
  private readonly fetched = new Map<string, RowVersion>();
  private fetchedTimer: NodeJS.Timeout | null = null;
  private bodyRead: Promise<void> | null = null;
  private bodyReadFrom = Infinity;
  private queuedRead: Promise<void> | null = null;
  private queuedFrom = Infinity;
  private refilling = false;
  /** `canReplay` answers by position; emptied whenever a row changes. */
  private readonly replayable = new Map<number, boolean>();

  constructor(stationId: string, store: FeedStore, logger: Logger) {
    this.stationId = stationId;
    this.store = store;
    this.logger = logger;
  }

  seqOf(rowId: string): number | undefined {
    return this.seqs.get(rowId);
  }

  /** A content row is current at this seq; returns its version when the row carries its data. */
  put(rowId: string, row: StoredRow): RowVersion | null {
    this.changed();
    this.fetched.delete(rowId);
    this.seqs.set(rowId, row.seq);
    this.held.delete(rowId);
    if (row.data === undefined) return null;
    const version = versionOf(this.stationId, row);
    this.held.set(rowId, version);
    if (this.held.size > CONTENT_BODIES) this.dropOldest();
    return version;
  }

  /** A content row was removed; `refill`: fetch older bodies when fewer than a snapshot's worth are left. */
  remove(rowId: string, refill: boolean): void {
    this.changed();
    this.fetched.delete(rowId);
    this.seqs.delete(rowId);
    this.held.delete(rowId);
    if (refill) this.refillIfShort();
  }

  /** The newest `count` content rows with their data, newest first (a connection's state). */
  newest(count: number): RowVersion[] {
    return [...this.held.values()].sort((a, b) => b.seq - a.seq).slice(0, count);
  }

  /** Content rows changed after `seq`, with their data; null when one has to be read first (`readBodies`). */
  changedSince(seq: number): RowVersion[] | null {
    const changed: RowVersion[] = [];
    for (const [rowId, rowSeq] of this.seqs) {
      if (rowSeq <= seq) continue;
      const body = this.held.get(rowId) ?? this.fetched.get(rowId);
      if (!body || body.seq !== rowSeq) return null;
      changed.push(body);
    }
    return changed;
  }

  /** Whether `changedSince(seq)` can answer from memory (every content row changed since has its body here). */
  canReplay(seq: number): boolean {
    const known = this.replayable.get(seq);
    if (known !== undefined) return known;
    let answer = true;
    for (const [rowId, rowSeq] of this.seqs) {
      if (rowSeq <= seq) continue;
      const body = this.held.get(rowId) ?? this.fetched.get(rowId);
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
          if (this.seqs.get(rowId) !== row.seq || this.held.has(rowId)) continue;
          this.fetched.set(rowId, versionOf(this.stationId, row));
        }
        this.changed();
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

  close(): void {
    if (this.fetchedTimer) clearTimeout(this.fetchedTimer);
  }

  private changed(): void {
    this.revision++;
    this.replayable.clear();
  }

  private dropOldest(): void {
    let oldest: RowVersion | null = null;
    for (const body of this.held.values()) if (!oldest || body.seq < oldest.seq) oldest = body;
    if (oldest) this.held.delete(oldest.rowId);
  }

  /** After removals, fetch the data of older content rows so new connections still get 20 of them. */
  private refillIfShort(): void {
    if (this.refilling || this.held.size >= SNAPSHOT_CONTENT_ROWS) return;
    if (this.seqs.size <= this.held.size) return;
    this.refilling = true;
    this.store
      .recentContent(this.stationId, CONTENT_BODIES)
      .then((rows) => {
        for (const row of rows) {
          const rowId = feedRowId(row.kind, row.entry);
          // Only a row whose seq we still hold as current: anything else changed since the read.
          if (this.seqs.get(rowId) !== row.seq || this.held.has(rowId)) continue;
          this.put(rowId, row);
        }
      })
      .catch((err: unknown) => this.logger.warn({ err, stationId: this.stationId }, 'content refill failed'))
      .finally(() => {
        this.refilling = false;
      });
  }
}
