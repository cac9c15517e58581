import type { Knex } from 'knex';

// A slug a record used before keeps resolving while that record is published, even after another
// record of the type took the slug over and was then unpublished or deleted (docs/content.md#listener-reads:
// NOT_FOUND only when no published record of the type ever used the slug). So record_slugs keeps one row per
// (slug, record) instead of one per slug; the lookup takes the newest use among published records.
// Rows overwritten before this migration are gone; every later use is kept.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE record_slugs DROP CONSTRAINT record_slugs_pkey;
    ALTER TABLE record_slugs ADD PRIMARY KEY (station_id, type, slug, record_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DELETE FROM record_slugs s USING record_slugs newer
      WHERE newer.station_id = s.station_id AND newer.type = s.type AND newer.slug = s.slug
        AND (newer.used_at, newer.record_id) > (s.used_at, s.record_id);
    ALTER TABLE record_slugs DROP CONSTRAINT record_slugs_pkey;
    ALTER TABLE record_slugs ADD PRIMARY KEY (station_id, type, slug);
  `);
}
