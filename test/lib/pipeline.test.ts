import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { numbered, pipelinedTransaction } from '../../src/lib/pipeline.ts';

// lib/pipeline.ts: statements of one send travel together, and the transaction behaves as if they
// had been sent one at a time.
describe('pipelined transactions', () => {
  let server: TestServer;
  const table = 'pipeline_probe';
  before(async () => {
    server = await sharedServer();
    await server.svc.db.raw(`CREATE TABLE IF NOT EXISTS ${table} (id int PRIMARY KEY, note text NOT NULL)`);
  });
  beforeEach(() => server.svc.db(table).delete());
  after(() => server.svc.db.raw(`DROP TABLE IF EXISTS ${table}`));
  const rows = () => server.svc.db(table).orderBy('id').pluck('id');

  it('numbers knex-style placeholders', () => {
    expect(numbered('SELECT ? AS a, ?::int AS b WHERE x = ?')).to.equal('SELECT $1 AS a, $2::int AS b WHERE x = $3');
  });

  it('answers each statement of a send in order and commits with the last one', async () => {
    const seen: string[] = [];
    const answers = await pipelinedTransaction(server.svc.db, async (tx) => {
      const [a, b] = await tx.send([
        { text: `INSERT INTO ${table} VALUES ($1, $2) RETURNING id`, values: [1, 'one'] },
        { name: 'pipeline_probe_count', text: `SELECT count(*)::int AS n FROM ${table}` },
      ]);
      tx.afterCommit(() => seen.push('after commit'));
      const [c] = await tx.commit([{ text: `INSERT INTO ${table} VALUES ($1, $2) RETURNING id`, values: [2, 'two'] }]);
      seen.push('committed');
      return [a[0].id, b[0].n, c[0].id];
    });
    // The second statement saw the first one's row: one transaction, in order.
    expect(answers).to.deep.equal([1, 1, 2]);
    expect(seen).to.deep.equal(['after commit', 'committed']);
    expect(await rows()).to.deep.equal([1, 2]);
  });

  it('a statement behind a lock in the same send reads what the previous lock holder committed while it waited', async () => {
    const lock = { name: 'pipeline_probe_lock', text: 'SELECT pg_advisory_xact_lock(4242)' };
    const count = { name: 'pipeline_probe_count', text: `SELECT count(*)::int AS n FROM ${table}` };
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = pipelinedTransaction(server.svc.db, async (tx) => {
      await tx.send([lock]);
      await held;
      await tx.commit([{ text: `INSERT INTO ${table} VALUES (1, 'written while the other one waited')` }]);
    });
    await new Promise((r) => setTimeout(r, 50));
    const second = pipelinedTransaction(server.svc.db, async (tx) => (await tx.send([lock, count]))[1][0].n);
    // Give the second one time to start waiting on the lock, then let the first commit.
    await new Promise((r) => setTimeout(r, 100));
    release();
    await first;
    expect(await second).to.equal(1);
  });

  it('rolls back when the function returns without committing', async () => {
    const result = await pipelinedTransaction(server.svc.db, async (tx) => {
      await tx.send([{ text: `INSERT INTO ${table} VALUES (1, 'one')` }]);
      return 'decided';
    });
    expect(result).to.equal('decided');
    expect(await rows()).to.deep.equal([]);
  });

  it('a failing statement fails the send, stores nothing from the transaction and leaves the connection usable', async () => {
    await server.svc.db(table).insert({ id: 7, note: 'kept' });
    let error: unknown = null;
    const ran: string[] = [];
    try {
      await pipelinedTransaction(server.svc.db, async (tx) => {
        tx.afterCommit(() => ran.push('after commit'));
        await tx.commit([
          { text: `INSERT INTO ${table} VALUES (1, 'one')` },
          { text: `INSERT INTO ${table} VALUES (7, 'duplicate')` },
          { text: `INSERT INTO ${table} VALUES (8, 'after the failure')` },
        ]);
      });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.an('error').with.property('code', '23505');
    expect(ran).to.deep.equal([]);
    expect(await rows()).to.deep.equal([7]);
    // Every pooled connection still answers (none was left inside an aborted transaction).
    const answers = await Promise.all(Array.from({ length: 12 }, () => server.svc.db.raw('SELECT 1 AS one')));
    expect(answers.map((a) => a.rows[0].one)).to.deep.equal(Array(12).fill(1));
  });

  it('rolls back an open transaction when the function throws', async () => {
    let error: unknown = null;
    try {
      await pipelinedTransaction(server.svc.db, async (tx) => {
        await tx.send([{ text: `INSERT INTO ${table} VALUES (1, 'one')` }]);
        throw new Error('changed my mind');
      });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.an('error').with.property('message', 'changed my mind');
    expect(await rows()).to.deep.equal([]);
    const status = await server.svc.db.raw(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'idle in transaction' AND datname = current_database()",
    );
    expect(status.rows[0].n).to.equal(0);
  });
});
