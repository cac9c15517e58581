import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';

// Kept apart from db.ts (which loads knex and pg) so the in-process job queue can leave a request's hook
// behind without loading the database driver.

/**
 * A statement the current request wants inside the first transaction it commits (the admin audit entry,
 * http/audit.ts): `beforeCommit` runs in that transaction after its work, with the work's result, so the
 * two commit or roll back together and the entry costs one statement, not a transaction of its own.
 */
export interface CommitHook {
  /** False once the request no longer wants it (its handler returned, or a transaction already took it). */
  wanted: boolean;
  beforeCommit(trx: Knex.Transaction, result: unknown): Promise<void>;
  /** The transaction that ran `beforeCommit` committed. */
  committed(): void;
}

/** The hook of the request running now (AsyncLocalStorage: follows the request's promises, nothing else). */
export const commitHooks = new AsyncLocalStorage<CommitHook>();

/** Runs `fn` outside any request's hook: jobs started from a request never take its audit entry. */
export const withoutCommitHook = <T>(fn: () => T): T => commitHooks.exit(fn);
