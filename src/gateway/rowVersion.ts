import { feedRowId, type FeedKind } from '../feed/names.ts';
import { nowPlayingAt } from '../domains/nowPlaying/presenter.ts';
import type { NowPlaying } from '../domains/nowPlaying/schemas.ts';
import { payloadJson } from './frames.ts';
import type { StoredRow } from './store.ts';

// One version of a feed row as the gateway holds it: the current rows of a station and the history of
// its now-playing and on-air rows (heard.ts) are made of these, and every view — live or a stream's
// listeners (delay.ts) — frames them with `payloadAt` at its own instant.

export const NOW_PLAYING_ROW = feedRowId('now-playing', 'current');

/** The kind of a row id (`kind:entry`). */
export const kindOf = (rowId: string): string => rowId.slice(0, rowId.indexOf(':'));

export interface RowVersion {
  rowId: string;
  seq: number;
  updatedAt: string;
  /** The payload as stored (`payloadJson`); a now-playing version is derived again at its view's instant. */
  payload: string;
  /** A now-playing version's data, when it has a track (its elapsed time and freshness move with time). */
  nowPlaying?: NowPlaying;
  /** When the version becomes current, in on-air time (epoch ms): a stream hears it at `moment + latency`. */
  moment: number;
  deleted: boolean;
  /** Says nothing (on-air null: nothing on air) — how every station's on-air row starts (heard.ts). */
  silent?: boolean;
}

/**
 * When a now-playing row's track plays: its observation's play time (`observedAt`, else `receivedAt` —
 * the REST definition of heard time); null when it names none. A row of no observation (a new station's:
 * freshness `empty`) comes before every play time.
 */
function playedAt(data: unknown): number | null {
  const freshness = (data as { freshness?: { status?: unknown; observedAt?: unknown; receivedAt?: unknown } } | null)?.freshness;
  if (freshness?.status === 'empty') return 0;
  const named = freshness?.observedAt ?? freshness?.receivedAt;
  if (named === undefined || named === null) return null;
  const at = Date.parse(String(named));
  return Number.isNaN(at) ? null : at;
}

/** The version a stored row (a bus message, a read) is: its payload serialised once, its moment found once. */
export function versionOf(stationId: string, row: StoredRow): RowVersion {
  const rowId = feedRowId(row.kind, row.entry);
  const played = row.kind === 'now-playing' ? playedAt(row.data) : null;
  const version: RowVersion = {
    rowId,
    seq: row.seq,
    updatedAt: row.updatedAt,
    payload: payloadJson(stationId, row.deleted ? { ...row, data: null } : row),
    // A now-playing row becomes current when its track plays, any other row when it changed.
    moment: played ?? Date.parse(row.updatedAt),
    deleted: row.deleted,
  };
  if (!row.deleted && row.data === null) version.silent = true;
  if (!row.deleted && played !== null && rowId === NOW_PLAYING_ROW && isNowPlaying(row.data) && row.data.track)
    version.nowPlaying = row.data;
  return version;
}

/**
 * A version's payload at `instant` for a view `shiftMs` behind on-air time (0: live): a now-playing
 * row's `elapsedSeconds` and freshness derived at that instant (not at the send time), its `endsAt`
 * moved by the shift (`nowPlayingAt`, the one answer for every view); any other row as stored.
 */
export function payloadAt(stationId: string, version: RowVersion, instant: number, shiftMs: number): string {
  if (!version.nowPlaying) return version.payload;
  const kind: FeedKind = 'now-playing';
  const data = nowPlayingAt(version.nowPlaying, new Date(instant), shiftMs);
  return payloadJson(stationId, { kind, entry: version.rowId.slice(kind.length + 1), data, updatedAt: version.updatedAt });
}

/**
 * The age of a now-playing version at `instant` in whole seconds (its derived fields change with it), or
 * null when nothing of it moves with time: views key their framed starts by it.
 */
export function ageAt(version: RowVersion | null | undefined, instant: number): number | null {
  return version?.nowPlaying ? Math.floor((instant - version.moment) / 1000) : null;
}

/** A now-playing row as the web and worker write it (presentNowPlaying); anything else is sent as stored. */
function isNowPlaying(data: unknown): data is NowPlaying {
  const d = data as Partial<NowPlaying> | null;
  return !!d && typeof d === 'object' && typeof d.freshness === 'object' && d.freshness !== null && 'track' in d;
}
