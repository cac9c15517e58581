import type { Knex } from 'knex';

// A vote row remembers the value it replaced (docs/inbox.md#how-it-works, "Votes"): a vote is one
// statement, INSERT … ON CONFLICT DO UPDATE SET previous = the row's value, and its RETURNING tells the
// counts what to take out. Read under the row's lock, so two votes of one client at once each see the
// other's (no client lock needed). NULL: the row was new.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE inbox_votes ADD COLUMN previous smallint`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE inbox_votes DROP COLUMN IF EXISTS previous`);
}
