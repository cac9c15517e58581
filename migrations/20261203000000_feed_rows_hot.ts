import type { Knex } from 'knex';

// A station's few feed rows (now-playing, on-air, schedule) are rewritten on every observation, each
// time with a new seq. An index on seq makes every such update a non-HOT one: a new entry in every
// index of the table, and dead index entries that pile up until a vacuum (where autovacuum is off, as on
// our CI machines, they never go: each look-up of the row then wades through them). Without it the
// updates are HOT (heap-only, pruned on access), and fillfactor 50 leaves room in each page for the new
// versions. The two readers by seq — a gateway catching up after a gap, and refilling content bodies —
// are rare and read one station's rows through the primary key (station_id, kind, entry).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS feed_rows_seq_idx;
    ALTER TABLE feed_rows SET (fillfactor = 50);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE feed_rows RESET (fillfactor);
    CREATE INDEX IF NOT EXISTS feed_rows_seq_idx ON feed_rows (station_id, seq);
  `);
}
