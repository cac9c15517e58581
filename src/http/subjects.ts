import type { Queue } from 'bullmq';
import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { ReadCache } from '../lib/readCache.ts';
import type { RateLimits } from './ratelimit.ts';
import type { Db, Trx } from '../lib/db.ts';
import type { ReadRouting } from '../lib/replicas/routing.ts';
import type { OperatorScope } from '../lib/operatorScopes.ts';

// What the framework knows of the station, credential, scope and module a route is gated by, and of
// the services its handlers get — without importing a domain or the composition. The domains fill the registry in by declaration merging (as Koa's DefaultState
// and Fastify's request decorations are), so handlers still get the domains' full types:
//
//   declare module '../../http/subjects.ts' { interface RouteSubjects { station: Station } }
//
// Unregistered, each falls back to the little the gates themselves read.

/** Filled in by the domains (stations/model.ts, auth/model.ts) and the composition (services.ts). */
export interface RouteSubjects {}

type Subject<K extends string, Fallback> = RouteSubjects extends Record<K, infer T> ? T : Fallback;

/** What the station gate and the module gate read of a station. */
export interface GatedStation {
  id: string;
  active: boolean;
  publicOnline: boolean;
  modules: Readonly<Record<string, boolean>>;
}

/** What the credential gate reads of a credential. */
export interface GatedCredential {
  id: string;
  stationId: string;
  scopes: readonly string[];
  expiresAt: Date;
  revokedAt: Date | null;
}

/** What the admin gate reads of an operator key. */
export interface GatedOperatorKey {
  id: string;
  label: string;
  stations: readonly string[] | '*';
  scopes: readonly OperatorScope[];
  expiresAt: Date;
  revokedAt: Date | null;
}

/** One admin write, as the audit trail keeps it (audit.ts writes it, `FrameworkServices.audit` stores it). */
export interface AuditEntry {
  id: string;
  at: Date;
  /** "root" for the root key. */
  keyId: string;
  keyLabel: string;
  method: string;
  /** Without the query string. */
  path: string;
  stationId: string | null;
  action: string;
  /** The resource the write names (its id), when there is one. */
  target: string | null;
  status: number;
  requestId: string;
  clientIp: string;
}

/**
 * What the framework itself uses of the services: the gates' lookups (answering synchronously from
 * memory when they can: `undefined` means not cached), the rate limits, the read cache, the settings.
 */
export interface FrameworkServices {
  config: Readonly<Config>;
  logger: Logger;
  clock: Clock;
  stations: {
    /** `realMs`: the wall-clock time when the caller already read it (cachedReads.ts reads it once per request). */
    peekBySlug(slug: string, realMs?: number): RouteStation | null | undefined;
    bySlugOrNull(slug: string): Promise<RouteStation | null>;
    peekById(id: string): RouteStation | null | undefined;
    byIdOrNull(id: string): Promise<RouteStation | null>;
  };
  credentials: {
    peek(hash: string, realMs?: number): RouteCredential | null | undefined;
    byHash(hash: string): Promise<RouteCredential | null>;
    touch(credential: RouteCredential, nowMs: number): void;
  };
  /** Operator keys by hash (admin routes only). */
  operatorKeys: {
    byHash(hash: string): Promise<RouteOperatorKey | null>;
    touch(key: RouteOperatorKey, nowMs: number): void;
  };
  /** Stores an audit entry, in `trx` when given (the change's own transaction). */
  audit: { record(trx: Trx | null, entry: AuditEntry): Promise<void> };
  rateLimits: RateLimits;
  reads: ReadCache;
  /** The primary: every write, and every read without read replicas. */
  db: Db;
  /** Where a listener read that misses the read cache runs (lib/replicas/routing.ts); null without replicas. */
  replicas: ReadRouting<Db> | null;
  /** The BullMQ queues for the dashboard, or null when jobs run in-process. */
  jobs: { bullQueues(): Queue[] | null };
}

export type RouteStation = Subject<'station', GatedStation>;
export type RouteCredential = Subject<'credential', GatedCredential>;
export type RouteScope = Subject<'scope', string>;
export type RouteOperatorKey = Subject<'operatorKey', GatedOperatorKey>;
export type RouteModuleKey = Subject<'moduleKey', string>;
/** What route handlers get as `svc` (the composition's web services once registered). */
export type RouteServices = Subject<'services', FrameworkServices>;

/** A station listeners can reach: active and publicly online (anything else answers 404). */
export const isPublic = (station: Pick<GatedStation, 'active' | 'publicOnline'>): boolean => station.active && station.publicOnline;
