import type { Knex } from 'knex';

// Votes in one statement (docs/inbox.md#how-it-works, "Votes"): a vote row remembers the value it
// replaced — INSERT … ON CONFLICT DO UPDATE SET previous = the row's value, read under the row's lock —
// and its RETURNING tells the counts what to take out (NULL: the row was new). A withdrawal is kept as
// value 0, so every vote of a batch is one upsert, taken in one lock order.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE inbox_votes ADD COLUMN previous smallint;
    ALTER TABLE inbox_votes DROP CONSTRAINT inbox_votes_value_check;
    ALTER TABLE inbox_votes ADD CONSTRAINT inbox_votes_value_check CHECK (value IN (1, 0, -1));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DELETE FROM inbox_votes WHERE value = 0;
    ALTER TABLE inbox_votes DROP CONSTRAINT inbox_votes_value_check;
    ALTER TABLE inbox_votes ADD CONSTRAINT inbox_votes_value_check CHECK (value IN (1, -1));
    ALTER TABLE inbox_votes DROP COLUMN IF EXISTS previous;
  `);
}
