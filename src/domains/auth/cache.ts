import { TtlCache } from '../../lib/cache.ts';
import type { Db } from '../../lib/db.ts';
import type { Invalidation } from '../../lib/invalidation.ts';
import type { Logger } from '../../lib/logger.ts';
import { credentialFromRow, type Credential, type CredentialRow } from './model.ts';

const LAST_USED_EVERY_MS = 60_000;

/**
 * Credential look-ups by token hash, kept in memory for a short TTL so listener reads do not hit
 * Postgres per request. Revoke and rotate invalidate the entry in every process through Redis.
 */
export class CredentialCache {
  private readonly entries = new TtlCache<string, Credential | null>(30_000);
  private readonly lastUsedWritten = new TtlCache<string, true>(LAST_USED_EVERY_MS);
  private readonly db: Db;
  private readonly logger: Logger;
  constructor(db: Db, invalidation: Invalidation, logger: Logger) {
    this.db = db;
    this.logger = logger;
    invalidation.on('credential', (hash) => this.entries.delete(hash));
  }

  /** The cached entry without waiting: a credential, null (known unknown), or undefined (not cached). */
  peek(hash: string): Credential | null | undefined {
    return this.entries.get(hash);
  }

  async byHash(hash: string): Promise<Credential | null> {
    const hit = this.entries.get(hash);
    if (hit !== undefined) return hit;
    const row = await this.db<CredentialRow>('credentials').where({ token_hash: hash }).first();
    const credential = row ? credentialFromRow(row) : null;
    this.entries.set(hash, credential);
    return credential;
  }

  /** Records use at most once a minute per credential per process, off the request path. */
  touch(credential: Credential, now: Date): void {
    if (this.lastUsedWritten.get(credential.id)) return;
    this.lastUsedWritten.set(credential.id, true);
    this.db('credentials')
      .where({ id: credential.id })
      .update({ last_used_at: now })
      .catch((err: unknown) => this.logger.warn({ err }, 'could not record credential use'));
  }
}
