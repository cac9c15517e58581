// Every Redis key and channel name Waveline uses is built here, never concatenated in place.
export const keys = {
  /** Pub/sub channel carrying one station's feed rows. */
  feedChannel: (stationId: string) => `waveline:feed:${stationId}`,
  /** Pattern matching every station's feed channel. */
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
  /** Prefix for rate-limiter buckets. */
  rateLimitPrefix: 'waveline:rl',
  /** Rate-limiter bucket prefix for anonymous realtime feed connection attempts (per client IP). */
  feedConnectRateLimitPrefix: 'waveline:rl:feed-connect',
  /** Token buckets pacing requests to third-party catalogues across every worker (domains/artwork/catalogue/pacing.ts). */
  catalogueRateLimitPrefix: 'waveline:rl:catalogue',
  /** Token buckets pacing each station's push messages across every worker (src/domains/push/notifications/sending/pacing.ts). */
  pushPacePrefix: 'waveline:rl:push-pace',
  /** BullMQ key prefix. */
  queuePrefix: 'waveline:bull',
  /** Artwork lookup cache entry. */
  artwork: (fingerprint: string) => `waveline:artwork:${fingerprint}`,
  /** Set of the job ids of a station's planned schedule timers (so a re-plan can drop stale ones). */
  scheduleTimers: (stationId: string) => `waveline:schedule:timers:${stationId}`,
  /** Ingest idempotency result for an eventId. */
  ingestResult: (stationId: string, eventId: string) => `waveline:ingest:${stationId}:${eventId}`,
};
