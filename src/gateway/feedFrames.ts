import { FEED_KINDS, type FeedAction, type FeedKind } from '../feed/names.ts';
import type { Position } from './cursor.ts';
import { SNAPSHOT_CONTENT_ROWS } from './contentBodies.ts';
import { eventFrame, payloadJson } from './frames.ts';
import { kindOf, payloadAt, type RowVersion } from './rowVersion.ts';
import type { StationRows } from './stationRows.ts';

// The frames a connection starts with, built from the station's rows (stationRows.ts) as one view reads
// them: the live view (stationFeed.ts) at now, a delayed view (delay.ts) at its heard time. The same
// code for both; a view only says at which instant it reads and which version of a row it holds.

/** How a view reads the station's rows. */
export interface RowReader {
  /** Kinds whose version the view picks by its own clock (`held`); every other row is read as it is now. */
  readonly clocked: ReadonlySet<string>;
  /** How far behind on-air time the view is (0: live); a now-playing row's `endsAt` moves by it. */
  readonly latencyMs: number;
  /** The version of a row of a `clocked` kind the view's connections hold (null: none). */
  held(rowId: string): RowVersion | null;
  /** On a resume from `position`: whether the client lacks the `held` version of a `clocked` row. */
  lacks(rowId: string, position: Position): boolean;
}

/** The live view's way of reading: every row as it is now. */
export const LIVE: RowReader = { clocked: new Set(), latencyMs: 0, held: () => null, lacks: () => true };

const FIXED_ORDER = new Map<string, number>(FEED_KINDS.map((kind, i) => [kind, i]));

const frameOf = (rows: StationRows, version: RowVersion, action: FeedAction, cursor: string, instant: number, shiftMs: number): Buffer =>
  Buffer.from(
    eventFrame(rows.stationId, version.rowId, action, version.updatedAt, payloadAt(rows.stationId, version, instant, shiftMs), cursor),
  );

/**
 * One `create` event per current row: schedule, on-air, now-playing, then the newest content first,
 * each framed with `cursor`. The now-playing row's elapsed time and freshness are derived again at the
 * view's instant, `now − latency` (the stored row says what they were when it was written).
 */
export function stateFrames(rows: StationRows, reader: RowReader, cursor: string, now: number): Buffer[] {
  const fixed: RowVersion[] = [];
  for (const row of rows.fixedRows()) {
    const kind = kindOf(row.rowId);
    if (!rows.isHidden(kind) && !reader.clocked.has(kind)) fixed.push(row);
  }
  for (const rowId of rows.versions.rowIds()) {
    const kind = kindOf(rowId);
    if (!reader.clocked.has(kind) || rows.isHidden(kind)) continue;
    const version = reader.held(rowId);
    if (version && !version.deleted) fixed.push(version);
  }
  fixed.sort((a, b) => (FIXED_ORDER.get(kindOf(a.rowId)) ?? 9) - (FIXED_ORDER.get(kindOf(b.rowId)) ?? 9));
  const content = rows.isHidden('content') ? [] : rows.content.newest(SNAPSHOT_CONTENT_ROWS);
  const instant = now - reader.latencyMs;
  return [...fixed, ...content].map((row) => frameOf(rows, row, 'create', cursor, instant, reader.latencyMs));
}

/**
 * The events a client at `position` (checked `resumable`) missed, in seq order: one `update` per row
 * changed since with its current data, one `delete` per row removed since. Null when the data of an
 * older content row has to be read first (`readBodies`).
 */
export function replayFrames(rows: StationRows, reader: RowReader, position: Position, cursor: string, now: number): Buffer[] | null {
  const { seq } = position;
  const instant = now - reader.latencyMs;
  const changed: Array<{ seq: number; frame: () => Buffer }> = [];
  const update = (version: RowVersion): void => {
    changed.push({ seq: version.seq, frame: () => frameOf(rows, version, 'update', cursor, instant, reader.latencyMs) });
  };
  for (const row of rows.fixedRows()) {
    const kind = kindOf(row.rowId);
    if (row.seq > seq && !rows.isHidden(kind) && !reader.clocked.has(kind)) update(row);
  }
  for (const rowId of rows.versions.rowIds()) {
    const kind = kindOf(rowId);
    if (!reader.clocked.has(kind)) continue;
    const version = reader.held(rowId);
    if (!version || version.deleted || rows.isHidden(kind) || !reader.lacks(rowId, position)) continue;
    update(version);
  }
  if (!rows.isHidden('content')) {
    const content = rows.content.changedSince(seq);
    if (content === null) return null;
    for (const body of content) update(body);
  }
  for (const [rowId, removed] of rows.removalsList()) {
    const kind = kindOf(rowId) as FeedKind;
    if (removed.seq <= seq || rows.isHidden(kind) || reader.clocked.has(kind)) continue;
    const payload = payloadJson(rows.stationId, { kind, entry: rowId.slice(kind.length + 1), data: null, updatedAt: removed.updatedAt });
    changed.push({
      seq: removed.seq,
      frame: () => Buffer.from(eventFrame(rows.stationId, rowId, 'delete', removed.updatedAt, payload, cursor)),
    });
  }
  changed.sort((a, b) => a.seq - b.seq);
  return changed.map((c) => c.frame());
}

// Frames are held and sent as UTF-8 buffers: uWS then copies bytes instead of converting a JS string for
// every socket (which also left native memory behind per connection).

/** Framed starts and replays of one view, by key, while the station's rows stay at one revision. */
export class FrameCache {
  private readonly frames = new Map<string, Buffer[]>();
  private revision = -1;

  get(revision: number, key: string): Buffer[] | undefined {
    if (revision !== this.revision) {
      this.frames.clear();
      this.revision = revision;
    }
    return this.frames.get(key);
  }

  set(key: string, frames: Buffer[]): void {
    if (this.frames.size >= 32) this.frames.clear();
    this.frames.set(key, frames);
  }

  clear(): void {
    this.frames.clear();
  }
}
