import { LoadingCache, TtlCache } from './cache.ts';
import type { Db } from './db.ts';
import type { Invalidation, InvalidationTopic } from './invalidation.ts';
import type { Logger } from './logger.ts';

const LAST_USED_EVERY_MS = 60_000;

/** Where a kind of secret is stored: its table, the column of its SHA-256 hash, and its cache topic. */
export interface SecretTable<Row, T> {
  table: string;
  hashColumn: string;
  /** Rotate and revoke publish the old hash on this topic; every process drops it. */
  topic: InvalidationTopic;
  fromRow(row: Row): T;
  /** For the log line when `last_used_at` cannot be written. */
  what: string;
}

/**
 * Secrets (station credentials, operator keys) looked up by the hash of the presented value, kept in
 * memory for a short TTL so requests do not hit Postgres each time; a confirmed invalidation drops an
 * entry in every process at once. `last_used_at` is written at most once a minute per secret and process.
 */
export class SecretLookup<Row extends object, T extends { id: string }> {
  /** By hash; reloaded before its TTL runs out while in use, once (lib/cache.ts's LoadingCache). */
  private readonly entries: LoadingCache<string, T | null>;
  private readonly lastUsedWritten = new TtlCache<string, true>(LAST_USED_EVERY_MS);
  private readonly db: Db;
  private readonly logger: Logger;
  private readonly kind: SecretTable<Row, T>;
  constructor(db: Db, invalidation: Invalidation, logger: Logger, kind: SecretTable<Row, T>) {
    this.db = db;
    this.logger = logger;
    this.kind = kind;
    this.entries = new LoadingCache(
      30_000,
      async (hash) => {
        const row = (await db(kind.table)
          .where({ [kind.hashColumn]: hash })
          .first()) as Row | undefined;
        return row ? kind.fromRow(row) : null;
      },
      (err: unknown) => logger.warn({ err }, `could not reload a ${kind.what}`),
    );
    invalidation.on(kind.topic, (hash) => this.entries.delete(hash));
  }

  /** The cached entry without waiting: a secret, null (known unknown), or undefined (not cached). */
  peek(hash: string, realMs?: number): T | null | undefined {
    return this.entries.peek(hash, realMs);
  }

  byHash(hash: string): Promise<T | null> {
    return this.entries.getOrLoad(hash);
  }

  /**
   * Records use at most once a minute per secret per process, off the request path. `nowMs` (the
   * service clock's, already read by the gate) both stamps the write and ages the memo, so a request
   * reads no clock here.
   */
  touch(secret: T, nowMs: number): void {
    if (this.lastUsedWritten.get(secret.id, nowMs)) return;
    this.lastUsedWritten.set(secret.id, true, nowMs);
    this.db(this.kind.table)
      .where({ id: secret.id })
      .update({ last_used_at: new Date(nowMs) })
      .catch((err: unknown) => this.logger.warn({ err }, `could not record ${this.kind.what} use`));
  }
}
