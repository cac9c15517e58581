import type { Config } from './config.ts';
import type { Clock } from './lib/clock.ts';
import type { Db } from './lib/db.ts';
import type { Invalidation } from './lib/invalidation.ts';
import type { Logger } from './lib/logger.ts';
import type { Redis } from './lib/redis.ts';
import type { FeedBus } from './feed/bus.ts';
import type { Jobs } from './jobs.ts';
import type { JobResults } from './lib/jobResults.ts';
import type { StationCache } from './domains/stations/cache.ts';
import type { CredentialCache } from './domains/auth/cache.ts';
import type { OperatorKeyCache } from './domains/operatorKeys/cache.ts';
import type { AuditLog } from './domains/audit/store.ts';
import type { RateLimits } from './http/ratelimit.ts';
import type { ReadCache } from './lib/readCache.ts';
import type { AsOfMemo } from './lib/asOf.ts';
import type { WebhookSubscriptions } from './domains/webhooks/subscriptions.ts';
import type { MediaStores } from './domains/media/stores/index.ts';
import type { ReadRouting } from './lib/replicas/routing.ts';

// What the services are, for everything that uses them: handlers, commands, jobs. Built once per
// process by the roles (roles/services.ts), which alone import the adapters' constructors.

/** What every process (web, worker, admin command) needs, built once and closed once. */
export interface Services {
  config: Readonly<Config>;
  logger: Logger;
  clock: Clock;
  db: Db;
  redis: Redis;
  invalidation: Invalidation;
  bus: FeedBus;
  jobs: Jobs;
  /** Reports how awaited jobs ended (workers). */
  jobResults: JobResults;
  stations: StationCache;
  /** Which webhooks want which events, per station (cached; no query for a station without webhooks). */
  webhooks: WebhookSubscriptions;
  /** Where media bytes are written and read (docs/media.md, "Stores"). */
  media: MediaStores;
  close(): Promise<void>;
}

/** What only a web process serves requests with: the credential gate's cache, the rate limits, the read cache. */
export interface WebServices extends Services {
  credentials: CredentialCache;
  /** The admin gate's operator keys by hash (admin routes only). */
  operatorKeys: OperatorKeyCache;
  audit: AuditLog;
  rateLimits: RateLimits;
  /**
   * Where listener reads that miss the read cache run: a replica that has replayed the station's last
   * write, else the primary (lib/replicas/routing.ts); null without DATABASE_REPLICA_URLS (every read on `db`).
   */
  replicas: ReadRouting<Db> | null;
  /** Listener reads' answers (bytes + ETag), dropped by `reads`/`station` invalidation. */
  reads: ReadCache;
  /** When each answer carrying `asOf` was first computed, shared by every process (lib/asOf.ts). */
  asOf: AsOfMemo;
}

// Route handlers get the web's services: the framework (src/http/) names them through its registry
// rather than importing this file (docs/architecture.md, "Layers").
declare module './http/subjects.ts' {
  interface RouteSubjects {
    services: WebServices;
  }
}

// Station change listeners (the features' station.ts files, listed in src/features.ts) act with the services of the process that made the change.
declare module './domains/stations/changes.ts' {
  interface StationChangeSubjects {
    services: Services;
  }
}
