// Presenters, programs, broadcasts and rundowns: rows as stored and the rules that derive from them.

export const NATURES = ['live', 'prerecorded', 'repeat'] as const;
export type Nature = (typeof NATURES)[number];

export const ITEM_KINDS = ['track', 'talk', 'ad', 'jingle'] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];

export type BroadcastStatus = 'scheduled' | 'live' | 'ended' | 'cancelled';

/** Schedule and programs windows span at most this many inclusive local days. */
export const MAX_WINDOW_DAYS = 31;
/** A schedule response holds at most this many broadcasts; more sets `truncated`. */
export const MAX_BROADCASTS = 1000;
/**
 * A broadcast lasts at most this long. The bound lets every window query start its index range scan
 * at `windowStart - MAX_BROADCAST_MS` instead of the station's whole history.
 */
export const MAX_BROADCAST_DAYS = 31;
export const MAX_BROADCAST_MS = MAX_BROADCAST_DAYS * 24 * 3600 * 1000;
/** The `schedule` feed row covers today and the next seven local days. */
export const FEED_DAYS = 8;

export interface PresenterRow {
  id: string;
  station_id: string;
  title: string;
  /** An uploaded image version of the station (docs/schedule.md#images); null: none. */
  image_version_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ProgramRow {
  id: string;
  station_id: string;
  title: string;
  description: string | null;
  profile_id: string | null;
  image_version_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface SlotRow {
  program_id: string;
  position: number;
  weekday: number;
  start_time: string;
  duration_minutes: number;
}

export interface BroadcastRow {
  id: string;
  station_id: string;
  program_id: string;
  title: string | null;
  starts_at: Date;
  ends_at: Date;
  nature: Nature;
  published: boolean;
  cancelled: boolean;
  cancellation_reason: string;
  repeat_of_id: string | null;
  presenter_ids: string[] | null;
  created_at: Date;
  updated_at: Date;
}

export interface RundownItemRow {
  id: string;
  broadcast_id: string;
  station_id: string;
  position: number;
  kind: ItemKind;
  artist: string | null;
  title: string;
  duration_seconds: number | null;
  planned_starts_at: Date;
  /** Set when the item's duration is known; otherwise derived on read (see `plannedEnds`). */
  planned_ends_at: Date | null;
}

export interface PresenterRef {
  id: string;
  title: string;
  imageVersionId: string | null;
  updatedAt: Date;
}

/** A broadcast with what listeners see of its program and presenters, resolved. */
export interface ResolvedBroadcast {
  row: BroadcastRow;
  program: { id: string; title: string; profileId: string | null; imageVersionId: string | null; updatedAt: Date };
  presenters: PresenterRef[];
}

export function broadcastStatus(row: Pick<BroadcastRow, 'cancelled' | 'starts_at' | 'ends_at'>, now: Date): BroadcastStatus {
  if (row.cancelled) return 'cancelled';
  if (now < row.starts_at) return 'scheduled';
  if (now < row.ends_at) return 'live';
  return 'ended';
}

/**
 * Planned end of each item: its own start plus duration when the duration is known, else the next
 * item's planned start, else the broadcast's end.
 */
export function plannedEnds(items: RundownItemRow[], broadcastEndsAt: Date): Date[] {
  return items.map((item, i) => item.planned_ends_at ?? items[i + 1]?.planned_starts_at ?? broadcastEndsAt);
}
