import type { Knex } from 'knex';

// Content delivery additions (docs/content.md).
// - content_type_versions.published_at: set the first time a record is published with that version;
//   a historical schema version is delivered only once it has one.
// - published_records.publication_id: the id of the current publication, so re-presenting a record
//   (media variants rendered later) keeps it.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE content_type_versions ADD COLUMN published_at timestamptz;
    ALTER TABLE published_records ADD COLUMN publication_id uuid;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE published_records DROP COLUMN IF EXISTS publication_id;
    ALTER TABLE content_type_versions DROP COLUMN IF EXISTS published_at;
  `);
}
