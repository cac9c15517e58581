import { FEED_HISTORY_MS, FEED_KINDS, feedRowId, type FeedAction, type FeedKind } from '../feed/names.ts';
import type { Logger } from '../lib/logger.ts';
import { ContentBodies } from './contentBodies.ts';
import { DELAYED_KINDS, HeardHistory } from './heard.ts';
import { payloadJson } from './frames.ts';
import { versionOf, type RowVersion } from './rowVersion.ts';
import type { CurrentRows, FeedStore, StoredRow } from './store.ts';

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

/** A row removed from the history, what a resuming client must be told. */
export interface Removal {
  seq: number;
  updatedAt: string;
}

/**
 * The station's row history, the one source every view of the station reads (Centrifugo's "one history,
 * many views"): the current rows (schedule, on-air, now-playing; content in ContentBodies), the removals
 * still inside the feed history window, and the recent versions of the now-playing and on-air rows
 * (`versions`), which the live view reads at now and each delayed view (delay.ts) at its own heard time.
 * Fed by the station's feed (stationFeed.ts) from the bus; it never knows who reads it.
 */
export class StationRows {
  readonly stationId: string;
  /** The recent versions of the now-playing and on-air rows. */
  readonly versions = new HeardHistory();
  readonly content: ContentBodies;
  /** schedule, on-air, now-playing rows (always held with data). */
  private readonly fixed = new Map<string, RowVersion>();
  /** Removed rows whose seq is above the watermark: a late, older message must not bring them back. */
  private readonly tombstones = new Map<string, number>();
  /** Every removal of the history (rowId → seq, time). */
  private readonly removals = new Map<string, Removal>();
  /** Told when a version of a now-playing or on-air row was added (the station's delayed views). */
  private readonly readers = new Set<() => void>();
  /** Kinds whose module the station has switched off: held and accounted for, never sent. */
  private hidden: ReadonlySet<string> = new Set<FeedKind>();
  private own = 0;
  private epochName = '';
  /** The highest seq whose tombstone is no longer kept: positions below it are resets. */
  private pruned = 0;
  private prunedAt = 0;
  private loaded = false;

  constructor(stationId: string, store: FeedStore, logger: Logger) {
    this.stationId = stationId;
    this.content = new ContentBodies(stationId, store, logger);
  }

  /** Changes whenever anything a start or a replay is built from changed. */
  get revision(): number {
    return this.own + this.content.revision;
  }

  get epoch(): string {
    return this.epochName;
  }

  get prunedSeq(): number {
    return this.pruned;
  }

  /** The initial read's rows; from here on versions added are told to the readers. */
  load(current: CurrentRows): void {
    this.hidden = new Set(current.hidden);
    for (const row of current.rows) this.hold(row);
    this.epochName = current.history?.epoch ?? '';
    this.pruned = current.history?.prunedSeq ?? 0;
    this.loaded = true;
    this.own++;
  }

  /** The seq a change must exceed to be newer than what is held (the row's, or its tombstone's). */
  lastSeq(rowId: string, kind: FeedKind): number {
    return this.seqOf(rowId, kind) ?? this.tombstones.get(rowId) ?? 0;
  }

  /** Applies a change newer than what is held; returns the event a live connection is sent. */
  apply(row: StoredRow): FeedChange {
    const rowId = feedRowId(row.kind, row.entry);
    const known = this.seqOf(rowId, row.kind);
    const action: FeedAction = row.deleted ? 'delete' : known === undefined ? 'create' : 'update';
    const held = this.hold(row);
    const payload =
      held?.payload ?? payloadJson(this.stationId, { kind: row.kind, entry: row.entry, data: null, updatedAt: row.updatedAt });
    return { rowId, action, updatedAt: row.updatedAt, payload, seq: row.seq };
  }

  /** Adds a version of a now-playing or on-air row (a change, or the history read for delayed views). */
  addVersion(row: StoredRow): void {
    this.keepVersion(versionOf(this.stationId, row));
  }

  /** Calls `reader` whenever a version is added; returns the call that stops it. */
  follow(reader: () => void): () => void {
    this.readers.add(reader);
    return () => this.readers.delete(reader);
  }

  /** The watermark rose: tombstones at or below it are no longer needed. */
  forgetTombstones(watermark: number): void {
    for (const [rowId, seq] of this.tombstones) if (seq <= watermark) this.tombstones.delete(rowId);
  }

  /** Sets which kinds the modules switch off; true when that changed. */
  setHidden(kinds: readonly string[]): boolean {
    const next = new Set<string>(kinds);
    if (next.size === this.hidden.size && [...next].every((kind) => this.hidden.has(kind))) return false;
    this.hidden = next;
    this.own++;
    return true;
  }

  /** Whether the station's modules switch this kind of row off (held, never sent). */
  isHidden(kind: string): boolean {
    return this.hidden.has(kind);
  }

  hiddenMask(): number {
    let mask = 0;
    for (const [i, kind] of FEED_KINDS.entries()) if (this.hidden.has(kind)) mask |= 1 << i;
    return mask;
  }

  /** The current schedule, on-air or now-playing row. */
  current(rowId: string): RowVersion | undefined {
    return this.fixed.get(rowId);
  }

  fixedRows(): Iterable<RowVersion> {
    return this.fixed.values();
  }

  removalsList(): Iterable<[string, Removal]> {
    return this.removals.entries();
  }

  /** Forgets removals older than the history window, as the hourly prune does in Postgres. */
  pruneRemovals(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    const horizon = now - FEED_HISTORY_MS;
    for (const [rowId, removed] of this.removals)
      if (Date.parse(removed.updatedAt) < horizon) {
        this.removals.delete(rowId);
        this.pruned = Math.max(this.pruned, removed.seq);
        this.own++;
      }
  }

  close(): void {
    this.content.close();
    this.readers.clear();
  }

  private seqOf(rowId: string, kind: string): number | undefined {
    return kind === 'content' ? this.content.seqOf(rowId) : this.fixed.get(rowId)?.seq;
  }

  /** Puts a row into the current state (or takes it out); returns the held version. */
  private hold(row: StoredRow): RowVersion | null {
    const rowId = feedRowId(row.kind, row.entry);
    this.own++;
    // A version of a delayed row serves both: the current row and the history (never changed once made).
    const version = row.kind === 'content' ? null : versionOf(this.stationId, row);
    if (version && DELAYED_KINDS.has(row.kind)) this.keepVersion(version);
    if (row.deleted) {
      this.fixed.delete(rowId);
      this.content.remove(rowId, this.loaded);
      this.tombstones.set(rowId, row.seq);
      this.removals.set(rowId, { seq: row.seq, updatedAt: row.updatedAt });
      return null;
    }
    this.tombstones.delete(rowId);
    this.removals.delete(rowId);
    if (!version) return this.content.put(rowId, row);
    this.fixed.set(rowId, version);
    return version;
  }

  private keepVersion(version: RowVersion): void {
    if (this.versions.add(version) && this.loaded) for (const reader of this.readers) reader();
  }
}
