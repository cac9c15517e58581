import knex, { type Knex } from 'knex';
import pg from 'pg';
import { isEmbeddedDatabase, shareEmbeddedSession } from './embedded/postgres.ts';
import { commitHooks } from './commitHooks.ts';

export { commitHooks, runWithCommitHook, type CommitHook } from './commitHooks.ts';

export type Db = Knex;
export type Trx = Knex.Transaction;

// Return bigint columns (feed sequence numbers, counts) as JS numbers: they stay far below 2^53.
pg.types.setTypeParser(20, (value: string) => Number(value));
// Numeric (durations) as numbers.
pg.types.setTypeParser(1700, (value: string) => Number(value));

/**
 * How long a request waits for a database connection (a new one to connect, or a busy pool to free
 * one) before it fails with a retryable 503: Postgres unreachable must answer within 2 s, not hang
 * (docs/errors.md#postgres-unreachable). knex's default is 60 s.
 */
export const CONNECT_TIMEOUT_MS = 1500;
/**
 * The embedded database is in this process and runs one statement at a time (docs/embedded.md): a
 * connection waits for its turn, which under load is longer than CONNECT_TIMEOUT_MS, and it cannot
 * become unreachable, so the short wait would only turn queueing into 503s.
 */
const EMBEDDED_WAIT_MS = 60_000;

export function createDb(databaseUrl: string, pool: { min?: number; max?: number } = {}): Db {
  const waitMs = isEmbeddedDatabase(databaseUrl) ? EMBEDDED_WAIT_MS : CONNECT_TIMEOUT_MS;
  return withCommitHooks(
    knex({
      client: 'pg',
      // Pipeline mode: statements queued on one connection are written without waiting for the answer
      // before (lib/pipeline.ts batches the hot paths' statements). One statement at a time, as knex
      // sends them, behaves exactly as without it. Keep-alive notices a peer gone silent.
      connection: {
        connectionString: databaseUrl,
        pipeline: true,
        connectionTimeoutMillis: waitMs,
        keepAlive: true,
      } as Knex.PgConnectionConfig,
      acquireConnectionTimeout: waitMs,
      pool: {
        min: pool.min ?? 0,
        max: pool.max ?? 10,
        afterCreate: (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) => {
          shareEmbeddedSession(conn);
          done(null, conn);
        },
      },
    }),
  );
}

/** Wraps `db.transaction(fn)` so the running request's hook, if any, joins the first transaction it opens. */
function withCommitHooks(db: Db): Db {
  const transaction = db.transaction.bind(db) as (handler?: unknown, config?: unknown) => unknown;
  const hooked = (handler?: unknown, config?: unknown): unknown => {
    const hook = commitHooks.getStore();
    if (typeof handler !== 'function' || !hook?.wanted) return transaction(handler, config);
    hook.wanted = false;
    const work = handler as (trx: Trx) => Promise<unknown>;
    const done = transaction(async (trx: Trx) => {
      const result = await work(trx);
      await hook.beforeCommit(trx, result);
      return result;
    }, config) as Promise<unknown>;
    return done.then(
      (result) => {
        hook.committed();
        return result;
      },
      (err: unknown) => {
        hook.wanted = true; // rolled back: the request records its entry (with its error status) itself
        throw err;
      },
    );
  };
  Object.defineProperty(db, 'transaction', { value: hooked, configurable: true });
  return db;
}

/** A transaction with an after-commit queue: feed rows and jobs go out only once the write is durable. */
export interface Tx {
  trx: Trx;
  afterCommit(fn: () => unknown): void;
}

export async function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const pending: Array<() => unknown> = [];
  const result = await db.transaction(async (trx) => fn({ trx, afterCommit: (cb) => void pending.push(cb) }));
  for (const cb of pending) await cb();
  return result;
}
