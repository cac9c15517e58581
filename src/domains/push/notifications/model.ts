import type { PushProvider } from '../../stations/model.ts';
import type { DeviceTopic, NotificationSource, NotificationStatus, Topic } from './schemas.ts';

// A notification as stored (docs/push.md#statuses-and-counts): its row, the counts kept on it, and the
// rules every part of push reads (how long it is kept, which statuses are final, how many jobs send it).

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;
export const RETENTION_MS = 30 * 24 * 3600_000;
export const FINAL_STATUSES: NotificationStatus[] = ['done', 'cancelled', 'expired', 'failed'];
/** Jobs sending one notification at once; each claims devices on its own (several workers share the work). */
export const SEND_PARTS = 2;

export interface NotificationRow {
  id: string;
  station_id: string;
  provider: PushProvider;
  topic: Topic;
  /**
   * The topic whose devices it goes to, targeted when its sending starts; null when its devices were
   * listed at its creation (targets.ts).
   */
  device_topic: DeviceTopic | null;
  source: NotificationSource;
  record_id: string | null;
  record_revision: number | null;
  /** The broadcast it is about and when it was due (a reminder; migration 20261213030000_push_follows); null otherwise. */
  broadcast_id: string | null;
  due_at: Date | null;
  title: string;
  body: string | null;
  url: string | null;
  data: Record<string, string>;
  ttl_seconds: number;
  collapse_key: string | null;
  idempotency_key: string | null;
  request_hash: string | null;
  status: NotificationStatus;
  error: string | null;
  targeted: number;
  /** Kept by a trigger on push_deliveries (migration 20261211000000_push_counts). */
  sent_count: number;
  failed_count: number;
  pruned_count: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface Counts {
  targeted: number;
  sent: number;
  failed: number;
  pruned: number;
  pending: number;
}

/** Live counts: pending includes devices whose request is in flight. */
export function countsOf(row: NotificationRow): Counts {
  const { targeted, sent_count: sent, failed_count: failed, pruned_count: pruned } = row;
  return { targeted, sent, failed, pruned, pending: targeted - sent - failed - pruned };
}

/** When the notification's TTL runs out (epoch milliseconds): nothing is sent after. */
export const expiresAt = (row: NotificationRow): number => row.created_at.getTime() + row.ttl_seconds * 1000;
