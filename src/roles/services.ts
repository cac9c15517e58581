// Every feature's station setting is registered before any module builds the station schemas.
import '../features.ts';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { createDb, type Db } from '../lib/db.ts';
import { ReadRouting, replicaName, WAL_POSITION_SQL, WalPosition } from '../lib/replicas/routing.ts';
import { Invalidation } from '../lib/invalidation.ts';
import type { Logger } from '../lib/logger.ts';
import { createBlockingRedis, createRedis } from '../lib/redis.ts';
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
  // The adapters follow the configuration: an empty REDIS_URL gives the in-process feed bus, invalidation,
  // job results and rate limits (src/lib/redis.ts) and job queue (src/lib/queue.ts), kept in the data dir.
  const inProcess = !config.redisUrl;
  if (inProcess) persistLocalQueues(join(config.dataDir, 'jobs.json'), DEFAULT_JOB_OPTIONS);
  const db = createDb(config.databaseUrl);
  // Auto-pipelining: the commands a turn of the event loop issues (feed publishes, job results, rate-limit
  // takes of concurrent requests) go out in one write — on loopback each write costs more than the command.
  const redis = createRedis(config.redisUrl, { enableAutoPipelining: true });
  const subscriber = createBlockingRedis(config.redisUrl);
  for (const conn of [redis, subscriber]) conn.on('error', (err) => logger.warn({ err }, 'redis connection error'));
  const invalidation = new Invalidation(redis, subscriber, logger);
  await invalidation.start();
  const jobResults = new JobResults(redis, subscriber, logger);
  const jobs = new Jobs(config.redisUrl, logger, jobResults);
  const media = new MediaStores(config.media, db);
  // Read replicas: every write's invalidation and feed message carries its commit LSN (lib/replicas/routing.ts).
  let walPosition: (() => Promise<string>) | null = null;
  if (config.databaseReplicaUrls.length > 0) {
    const position = new WalPosition((sql) => db.raw(sql).then((r: { rows: Array<Record<string, unknown>> }) => r.rows));
    walPosition = () => position.read();
    invalidation.carryLsn(walPosition);
  }
  return {
    config,
    logger,
    clock: options.clock ?? systemClock,
    db,
    redis,
    invalidation,
    bus: new RedisFeedBus(redis, walPosition),
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
  const replicas = createReadRouting(config, svc.db, svc.invalidation, logger);
  return {
    ...svc,
    replicas,
    credentials: new CredentialCache(svc.db, svc.invalidation, logger),
    operatorKeys: new OperatorKeyCache(svc.db, svc.invalidation, logger),
    audit: new AuditLog(svc.db),
    rateLimits: new RateLimits(svc.redis, config.rateLimits),
    reads: new ReadCache(config.readCacheMaxBytes, READ_CACHE_MAX_AGE_MS, svc.invalidation, replicas),
    asOf: new AsOfMemo(svc.db, svc.invalidation),
    async close() {
      if (replicas) {
        replicas.close();
        await Promise.all(replicaDbs.get(replicas)!.map((each) => each.destroy()));
      }
      await svc.close();
    },
  };
}

const replicaDbs = new WeakMap<ReadRouting<Db>, Db[]>();

/**
 * With DATABASE_REPLICA_URLS: where listener reads run (lib/replicas/routing.ts), hearing every write's commit
 * LSN from the `reads` and `station` invalidations; null without replicas (every read on the primary).
 */
function createReadRouting(config: Readonly<Config>, primary: Db, invalidation: Invalidation, logger: Logger): ReadRouting<Db> | null {
  if (config.databaseReplicaUrls.length === 0) return null;
  const dbs = config.databaseReplicaUrls.map((url) => createDb(url));
  const routing = new ReadRouting<Db>({
    primary,
    replicas: config.databaseReplicaUrls.map((url, i) => ({
      name: replicaName(url),
      handle: dbs[i],
      query: (sql) => dbs[i].raw(sql).then((r: { rows: Array<Record<string, unknown>> }) => r.rows),
    })),
    maxLagSeconds: config.databaseReplicaMaxLagSeconds,
    logger,
    primaryPosition: () => primary.raw(WAL_POSITION_SQL).then((r: { rows: Array<{ lsn: string }> }) => r.rows[0].lsn),
  });
  replicaDbs.set(routing, dbs);
  invalidation.on('reads', (id, lsn) => {
    if (lsn !== undefined) routing.heard(id.slice(0, id.lastIndexOf(':')), lsn);
  });
  invalidation.on('station', (id, lsn) => {
    if (lsn !== undefined) routing.heard(id, lsn);
  });
  // Write positions published while the connection was down were missed: from now on every read needs
  // what the primary has written by the time it came back.
  invalidation.onReconnect(() => void routing.raiseFloor());
  return routing;
}
