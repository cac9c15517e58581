import type { Knex } from 'knex';

// Play log identifiers for royalty reports (docs/now-playing.md#body-fields):
// the ISRC an encoder reported with an observation, normalised (no hyphens, upper case). Never shown to
// listeners; only the operator's play log reads it.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE observations ADD COLUMN isrc text`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE observations DROP COLUMN isrc`);
}
