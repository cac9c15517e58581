// Every feature's station setting is registered before any module builds the station schemas.
import '../features.ts';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { createDb } from '../lib/db.ts';
import { Invalidation } from '../lib/invalidation.ts';
import type { Logger } from '../lib/logger.ts';
import { clusterOf, createBlockingRedis, createRedis } from '../lib/redis.ts';
import { useRedisNames } from '../lib/keys.ts';
import { clusterHealth } from '../lib/redisCluster.ts';
import { setClusterHealthSource } from '../lib/redisCluster/metrics.ts';
import { RedisFeedBus } from '../feed/bus.ts';
import { Jobs } from '../jobs.ts';
import { JobResults } from '../lib/jobResults.ts';
import { StationCache } from '../domains/stations/cache.ts';
import { CredentialCache } from '../domains/auth/cache.ts';
import { OperatorKeyCache } from '../domains/operatorKeys/cache.ts';
import { AuditLog } from '../domains/audit/store.ts';
import { RateLimits } from '../http/ratelimit.ts';
import { ReadCache } from '../lib/readCache.ts';
import { AsOfMemo } from '../lib/asOf.ts';
import { WebhookSubscriptions } from '../domains/webhooks/subscriptions.ts';
import { MediaStores } from '../domains/media/stores/index.ts';
import { DEFAULT_JOB_OPTIONS } from '../lib/queue.ts';
import { persistLocalQueues, saveLocalQueues } from '../lib/embedded/localQueue.ts';
import type { Services, WebServices } from '../services.ts';

// The services of a process (src/services.ts says what they are), built from the configuration: the
// roles (web, dev, admin commands) and the worker role (workers/index.ts) call these once at start.

/** Bounds how long a lost invalidation message can leave an answer stale, like the station cache's TTL. */
const READ_CACHE_MAX_AGE_MS = 10_000;

export async function createServices(config: Readonly<Config>, logger: Logger, options: { clock?: Clock } = {}): Promise<Services> {
  // The adapters follow the configuration: without REDIS_URL or REDIS_CLUSTER_URLS the feed bus,
  // invalidation, job results and rate limits (src/lib/redis.ts) and job queue (src/lib/queue.ts) run
  // in-process, kept in the data dir. The names of keys and channels follow it too (src/lib/keys.ts).
  useRedisNames(config.redis);
  const inProcess = config.redis.kind === 'memory';
  if (inProcess) persistLocalQueues(join(config.dataDir, 'jobs.json'), DEFAULT_JOB_OPTIONS);
  const db = createDb(config.databaseUrl);
  // Auto-pipelining: the commands a turn of the event loop issues (feed publishes, job results, rate-limit
  // takes of concurrent requests) go out in one write — on loopback each write costs more than the command.
  const redis = createRedis(config.redis, { enableAutoPipelining: true });
  const subscriber = createBlockingRedis(config.redis);
  for (const conn of [redis, subscriber]) conn.on('error', (err) => logger.warn({ err }, 'redis connection error'));
  if (clusterOf(redis)) setClusterHealthSource(() => clusterHealth(redis));
  const invalidation = new Invalidation(redis, subscriber, logger);
  await invalidation.start();
  const jobResults = new JobResults(redis, subscriber, logger);
  const jobs = new Jobs(config.redis, logger, jobResults);
  const media = new MediaStores(config.media, db);
  return {
    config,
    logger,
    clock: options.clock ?? systemClock,
    db,
    redis,
    invalidation,
    bus: new RedisFeedBus(redis),
    jobs,
    jobResults,
    stations: new StationCache(db, invalidation, logger),
    webhooks: new WebhookSubscriptions(db, invalidation),
    media,
    async close() {
      await jobs.close();
      await media.close();
      if (inProcess) saveLocalQueues();
      subscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
      await db.destroy();
    },
  };
}

/** The services of a web process (or of `waveline dev`, whose workers share them). */
export async function createWebServices(config: Readonly<Config>, logger: Logger, options: { clock?: Clock } = {}): Promise<WebServices> {
  const svc = await createServices(config, logger, options);
  return {
    ...svc,
    credentials: new CredentialCache(svc.db, svc.invalidation, logger),
    operatorKeys: new OperatorKeyCache(svc.db, svc.invalidation, logger),
    audit: new AuditLog(svc.db),
    rateLimits: new RateLimits(svc.redis, config.rateLimits),
    reads: new ReadCache(config.readCacheMaxBytes, READ_CACHE_MAX_AGE_MS, svc.invalidation),
    asOf: new AsOfMemo(svc.db, svc.invalidation),
  };
}
