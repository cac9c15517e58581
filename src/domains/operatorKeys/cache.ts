import { TtlCache } from '../../lib/cache.ts';
import type { Db } from '../../lib/db.ts';
import type { Invalidation } from '../../lib/invalidation.ts';
import type { Logger } from '../../lib/logger.ts';
import { operatorKeyFromRow, type OperatorKey, type OperatorKeyRow } from './model.ts';

const LAST_USED_EVERY_MS = 60_000;

/**
 * Operator keys by hash, kept briefly in memory like listener credentials (auth/cache.ts). Rotate and
 * delete drop the old hash in every process through a confirmed invalidation, so the key stops at once.
 * Only admin requests ever ask here: listener routes never reach this code.
 */
export class OperatorKeyCache {
  private readonly entries = new TtlCache<string, OperatorKey | null>(30_000);
  private readonly lastUsedWritten = new TtlCache<string, true>(LAST_USED_EVERY_MS);
  private readonly db: Db;
  private readonly logger: Logger;
  constructor(db: Db, invalidation: Invalidation, logger: Logger) {
    this.db = db;
    this.logger = logger;
    invalidation.on('operator-key', (hash) => this.entries.delete(hash));
  }

  async byHash(hash: string): Promise<OperatorKey | null> {
    const hit = this.entries.get(hash);
    if (hit !== undefined) return hit;
    const row = await this.db<OperatorKeyRow>('operator_keys').where({ key_hash: hash }).first();
    const key = row ? operatorKeyFromRow(row) : null;
    this.entries.set(hash, key);
    return key;
  }

  /** Records use at most once a minute per key per process, off the request path (no write per request). */
  touch(key: OperatorKey, now: Date): void {
    if (this.lastUsedWritten.get(key.id)) return;
    this.lastUsedWritten.set(key.id, true);
    this.db('operator_keys')
      .where({ id: key.id })
      .update({ last_used_at: now })
      .catch((err: unknown) => this.logger.warn({ err }, 'could not record operator key use'));
  }
}
