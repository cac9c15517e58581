import type { Db } from '../../lib/db.ts';
import type { Invalidation } from '../../lib/invalidation.ts';
import type { Logger } from '../../lib/logger.ts';
import { SecretLookup } from '../../lib/secretLookup.ts';
import { operatorKeyFromRow, type OperatorKey, type OperatorKeyRow } from './model.ts';

/**
 * Operator keys by hash, kept briefly in memory like listener credentials. Rotate and delete drop the
 * old hash in every process through a confirmed invalidation, so the key stops at once. Only admin
 * requests ever ask here: listener routes never reach this code.
 */
export class OperatorKeyCache extends SecretLookup<OperatorKeyRow, OperatorKey> {
  constructor(db: Db, invalidation: Invalidation, logger: Logger) {
    super(db, invalidation, logger, {
      table: 'operator_keys',
      hashColumn: 'key_hash',
      topic: 'operator-key',
      fromRow: operatorKeyFromRow,
      what: 'operator key',
    });
  }
}
