import type pg from 'pg';
import type { Db } from './db.ts';

// Transactions for the ingest hot path whose statements travel together.
//
// A knex transaction costs a round trip per statement: BEGIN, each statement, COMMIT — and on a
// loopback or LAN connection every round trip is a write and a wake-up on both sides, which cost more
// than running the statements. The pool's connections run in pg's pipeline mode (db.ts), so the
// statements of one `send` are written in one go (the socket is corked meanwhile) and Postgres answers
// them in order: an ingest is usually one round trip instead of five, a rundown following two instead of six.
// Every statement still has its own Sync, so a failing one fails the rest of the transaction
// ("current transaction is aborted") and a COMMIT behind it rolls back, exactly as one at a time; and
// each statement takes its own snapshot (READ COMMITTED), so a read behind a lock in the same send sees
// what the previous lock holder committed (test/lib/pipeline.test.ts).
//
// Tried and dropped: one simple-protocol message of `EXECUTE`s of SQL-prepared statements per round trip
// (fewer protocol messages, values as literals) — no difference in A/B runs; Postgres' cost is per
// statement, not per message.

export interface Statement {
  /** A name makes it a prepared statement: Postgres plans it once per connection. */
  name?: string;
  text: string;
  values?: unknown[];
}

/** Our SQL constants are written with knex's `?` placeholders; pg wants `$1…$n`. (None holds a literal `?`.) */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

type Rows = Array<Record<string, unknown>>;

export interface PipelinedTx {
  /** Sends the statements (the first send opens the transaction) and resolves with each one's rows. */
  send(statements: Statement[]): Promise<Rows[]>;
  /** Sends the statements and COMMIT together; then runs the after-commit callbacks. */
  commit(statements?: Statement[]): Promise<Rows[]>;
  /** Runs once the transaction has committed (feed rows are published only when durable). */
  afterCommit(fn: () => unknown): void;
}

const BEGIN: Statement = { text: 'BEGIN' };
const COMMIT: Statement = { text: 'COMMIT' };

/** What pg is handed for a statement: named (prepared) when it has a name. */
const queryConfig = (s: Statement): pg.QueryConfig =>
  s.name ? { name: s.name, text: s.text, values: s.values } : { text: s.text, values: s.values };

/** Writes every statement in one go and waits for all the answers; the first error wins. */
async function sendTogether(client: pg.Client, statements: Statement[]): Promise<Rows[]> {
  const stream = (client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
  stream.cork();
  let pending: Array<Promise<pg.QueryResult>>;
  try {
    pending = statements.map((s) => client.query(queryConfig(s)));
  } finally {
    stream.uncork();
  }
  const settled = await Promise.allSettled(pending);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((s) => (s as PromiseFulfilledResult<pg.QueryResult>).value.rows);
}

/**
 * One statement on a pooled connection, straight to pg: no query builder, no binding rewrite. For a
 * statement a hot path sends many times a second (a vote batch): knex's raw() rewrites named bindings
 * and clones its config on every call, which costs more web CPU than the statement's own round trip.
 */
export async function runStatement(db: Db, statement: Statement): Promise<Rows> {
  const client = (await db.client.acquireConnection()) as pg.Client;
  try {
    const result = await client.query(queryConfig(statement));
    return result.rows;
  } finally {
    await db.client.releaseConnection(client);
  }
}

/**
 * Runs `fn` in a transaction on one pooled connection. If `fn` returns without committing, the
 * transaction is rolled back (a read-only decision, e.g. a collapsed repeat); if anything throws, too.
 */
export async function pipelinedTransaction<T>(db: Db, fn: (tx: PipelinedTx) => Promise<T>): Promise<T> {
  const client = (await db.client.acquireConnection()) as pg.Client;
  // Read and written by the closures below (an object, so the checks after `fn` are not narrowed away).
  const tx_ = { state: 'idle' as 'idle' | 'open' | 'done' };
  const callbacks: Array<() => unknown> = [];
  const tx: PipelinedTx = {
    async send(statements) {
      if (tx_.state === 'done') throw new Error('transaction already finished');
      const opening = tx_.state === 'idle';
      tx_.state = 'open';
      const rows = await sendTogether(client, opening ? [BEGIN, ...statements] : statements);
      return opening ? rows.slice(1) : rows;
    },
    async commit(statements = []) {
      if (tx_.state === 'done') throw new Error('transaction already finished');
      const opening = tx_.state === 'idle';
      // Whatever the answer, the COMMIT (or the ROLLBACK it turns into) ends the transaction.
      tx_.state = 'done';
      const rows = await sendTogether(client, opening ? [BEGIN, ...statements, COMMIT] : [...statements, COMMIT]);
      for (const cb of callbacks) await cb();
      return rows.slice(opening ? 1 : 0, -1);
    },
    afterCommit(fn) {
      callbacks.push(fn);
    },
  };
  try {
    const result = await fn(tx);
    if (tx_.state === 'open') await client.query('ROLLBACK');
    return result;
  } catch (err) {
    if (tx_.state === 'open') await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await db.client.releaseConnection(client);
  }
}
