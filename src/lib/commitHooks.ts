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

let audited = 0;

/**
 * Runs `work` with `hook` as the request's commit hook. Node 22's AsyncLocalStorage keeps a promise hook
 * on in the whole process from its first `run` until it is disabled: after one admin write, every
 * listener read paid it (about 30 % more CPU per cached read: bench:reads,
 * docs/benchmarks.md#asynclocalstorage-and-the-promise-hook). So the storage is disabled whenever no hooked
 * request is left; the next `run` enables it again.
 */
export async function runWithCommitHook<T>(hook: CommitHook, work: () => Promise<T> | T): Promise<T> {
  audited++;
  try {
    return await commitHooks.run(hook, work);
  } finally {
    if (--audited === 0) commitHooks.disable();
  }
}

/** Runs `fn` outside any request's hook: jobs started from a request never take its audit entry. */
export const withoutCommitHook = <T>(fn: () => T): T => commitHooks.exit(fn);
