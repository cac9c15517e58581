import type { RedisTarget } from '../config.ts';

// Every Redis key and channel name Waveline uses is built here, never concatenated in place.
//
// Two styles, chosen once at start-up by `useRedisNames` (docs/operations.md#names-on-redis-cluster):
// - classic (one Redis, and the in-process store): the names as they always were, so an upgrade finds
//   its queued and delayed jobs and two versions of the gateway hear each other during a rolling deploy;
// - cluster (REDIS_CLUSTER_URLS): every key of one station carries the station's hash tag `{stationId}`,
//   so the commands of one station's path stay in one slot; a station's feed channel is a sharded channel
//   (SPUBLISH/SSUBSCRIBE) with the same tag; each BullMQ queue gets a hash tag of its own in its prefix,
//   so every key of one queue (and its Lua scripts) stays in one slot and the queues spread over the
//   masters. Channels every process must hear (invalidations, job results) stay classic pub/sub.

let clusterNames = false;

/** Chooses the names for where Redis is: called once by each process before it builds a Redis client. */
export function useRedisNames(target: RedisTarget): void {
  clusterNames = target.kind === 'cluster';
}

/** A station's hash tag on the cluster; the bare id on one Redis. */
const station = (stationId: string): string => (clusterNames ? `{${stationId}}` : stationId);

export const keys = {
  /** Whether names are the cluster's (station feed channels are then sharded: SPUBLISH/SSUBSCRIBE). */
  get sharded(): boolean {
    return clusterNames;
  },
  /** Pub/sub channel carrying one station's feed rows (a sharded channel on the cluster). */
  feedChannel: (stationId: string) => `waveline:feed:${station(stationId)}`,
  /** Pattern matching every station's feed channel (one Redis only: sharded channels have no patterns). */
  feedChannelPattern: 'waveline:feed:*',
  /** Pub/sub channel on which writers tell every process to drop cached stations and credentials. */
  invalidateChannel: 'waveline:invalidate',
  /**
   * Pub/sub channels of confirmed invalidations (station and credential changes): every web and worker
   * process drops the entry and answers on the ack channel, so the admin write returns only once every
   * process would refuse or show the change on its next read (src/lib/invalidation.ts).
   */
  invalidateSyncChannel: 'waveline:invalidate:sync',
  invalidateAckChannel: 'waveline:invalidate:ack',
  /** Pub/sub channel on which workers report how awaited jobs ended (src/lib/jobResults.ts). */
  jobResultsChannel: 'waveline:job-results',
  /** Prefix for rate-limiter buckets (one key per bucket, one single-key script per take). */
  rateLimitPrefix: 'waveline:rl',
  /** Rate-limiter bucket prefix for anonymous realtime feed connection attempts (per client IP). */
  feedConnectRateLimitPrefix: 'waveline:rl:feed-connect',
  /** Token buckets pacing requests to third-party catalogues across every worker (domains/artwork/catalogue/pacing.ts). */
  catalogueRateLimitPrefix: 'waveline:rl:catalogue',
  /** Token buckets pacing each station's push messages across every worker (src/domains/push/notifications/sending/pacing.ts). */
  pushPacePrefix: 'waveline:rl:push-pace',
  /** The bucket of one station's push pace, under `pushPacePrefix`. */
  pushPaceBucket: (stationId: string) => station(stationId),
  /** BullMQ key prefix of a queue: one for all on one Redis; the queue's own hash tag on the cluster. */
  queuePrefix: (queue: string) => (clusterNames ? `waveline:bull:{${queue}}` : 'waveline:bull'),
  /** Artwork lookup cache entry. */
  artwork: (fingerprint: string) => `waveline:artwork:${fingerprint}`,
  /** Set of the job ids of a station's planned schedule timers (so a re-plan can drop stale ones). */
  scheduleTimers: (stationId: string) => `waveline:schedule:timers:${station(stationId)}`,
  /** Ingest idempotency result for an eventId. */
  ingestResult: (stationId: string, eventId: string) => `waveline:ingest:${station(stationId)}:${eventId}`,
};
