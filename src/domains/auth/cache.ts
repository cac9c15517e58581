import type { Db } from '../../lib/db.ts';
import type { Invalidation } from '../../lib/invalidation.ts';
import type { Logger } from '../../lib/logger.ts';
import { SecretLookup } from '../../lib/secretLookup.ts';
import { credentialFromRow, type Credential, type CredentialRow } from './model.ts';

/**
 * Credential look-ups by token hash, kept in memory for a short TTL so listener reads do not hit
 * Postgres per request. Revoke and rotate invalidate the entry in every process through Redis.
 */
export class CredentialCache extends SecretLookup<CredentialRow, Credential> {
  constructor(db: Db, invalidation: Invalidation, logger: Logger) {
    super(db, invalidation, logger, {
      table: 'credentials',
      hashColumn: 'token_hash',
      topic: 'credential',
      fromRow: credentialFromRow,
      what: 'credential',
    });
  }
}
