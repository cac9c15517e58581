import type { FeedKind } from '../feed/names.ts';
import type { RowVersion } from './rowVersion.ts';

// Listener time (docs/realtime.md#listener-time-stream): the
// versions of a station's now-playing and on-air rows, so a connection with `stream=` can be given them
// as its listeners hear them — each version becomes audible at its moment (the observation's play time for
// now-playing, the time of the change for on-air) plus the stream's latency. Part of the station's rows
// (stationRows.ts), which the live view and every delayed view read.

/**
 * The longest latency a stream may have (`latencySeconds` 0–600:
 * docs/now-playing.md#heard-time-answers-in-the-listeners-time), and so the history kept.
 */
export const MAX_LATENCY_MS = 600_000;

/** The kinds a connection with `stream=` receives delayed; `schedule` and `content` are not delayed. */
export const DELAYED_KINDS: ReadonlySet<string> = new Set<FeedKind>(['now-playing', 'on-air']);

/** One version of a delayed row. */
export type HeardVersion = RowVersion;

/** What the history can say of a row at a past moment: the version (null: no row), or that it reaches back too little. */
export type HeardAnswer = HeardVersion | null | 'unknown';

/**
 * The recent versions of a station's delayed rows, at most MAX_LATENCY_MS of them: older versions are
 * dropped, except the newest one before that horizon (what was current when the kept ones begin). The
 * oldest version kept of a row is its base: every later version of the row is known.
 */
export class HeardHistory {
  private readonly rows = new Map<string, HeardVersion[]>();
  private readonly clock: () => number;
  private prunedAt = 0;

  constructor(clock: () => number = Date.now) {
    this.clock = clock;
  }

  /** Adds a version (kept in seq order); false when it is known already. */
  add(version: HeardVersion): boolean {
    let versions = this.rows.get(version.rowId);
    if (!versions) this.rows.set(version.rowId, (versions = []));
    let i = versions.length;
    while (i > 0 && versions[i - 1].seq > version.seq) i--;
    if (i > 0 && versions[i - 1].seq === version.seq) return false;
    versions.splice(i, 0, version);
    this.prune();
    return true;
  }

  rowIds(): Iterable<string> {
    return this.rows.keys();
  }

  /**
   * The version of `rowId` current at heard time `at`, among versions up to `seq`: the one with the
   * latest moment at or before `at` (ties: the later seq), as "the latest observation whose play time is
   * at or before heard time". `unknown` when the history does not reach back to `at` or `seq`.
   */
  at(rowId: string, at: number, seq = Infinity): HeardAnswer {
    const versions = this.rows.get(rowId);
    if (!versions || versions.length === 0) return null;
    const base = versions[0];
    if (seq < base.seq) return 'unknown';
    let best: HeardVersion | null = null;
    for (const version of versions) {
      if (version.seq > seq) break;
      if (version.moment <= at && (!best || version.moment >= best.moment)) best = version;
    }
    // Nothing at or before `at`: what came before the oldest version kept is not known.
    // …unless the row did not exist then and its first version says nothing (a station younger than the
    // stream's latency: its on-air row starts null), which is what a listener heard before it too.
    return best ?? (base.silent ? base : 'unknown');
  }

  /** Versions whose moment is in (`after`, `to`], in the order they become current (moment, then seq). */
  between(after: number, to: number): HeardVersion[] {
    const found: HeardVersion[] = [];
    for (const versions of this.rows.values())
      for (const version of versions) if (version.moment > after && version.moment <= to) found.push(version);
    return found.sort((a, b) => a.moment - b.moment || a.seq - b.seq);
  }

  /** The earliest moment after `after` at which a kept version becomes current (a delayed view's next timer). */
  nextMoment(after: number): number | null {
    let next: number | null = null;
    for (const versions of this.rows.values())
      for (const version of versions) if (version.moment > after && (next === null || version.moment < next)) next = version.moment;
    return next;
  }

  /** How many versions are kept (the memory bound's test). */
  get size(): number {
    let size = 0;
    for (const versions of this.rows.values()) size += versions.length;
    return size;
  }

  /** Drops versions older than MAX_LATENCY_MS except each row's newest before that horizon. */
  prune(now = this.clock()): void {
    if (now - this.prunedAt < 1000) return;
    this.prunedAt = now;
    const horizon = now - MAX_LATENCY_MS;
    for (const [rowId, versions] of this.rows) {
      let base: HeardVersion | null = null;
      for (const version of versions) if (version.moment < horizon && (!base || version.moment >= base.moment)) base = version;
      if (!base) continue;
      const kept = versions.filter((version) => version === base || version.moment >= horizon);
      this.rows.set(rowId, kept);
    }
  }
}
