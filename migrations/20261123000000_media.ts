import type { Knex } from 'knex';

// Media additions (docs/media.md).
// - media_versions.focal_x / focal_y: the focal point a version's crops were rendered around. The asset
//   keeps the latest one as the default for its next version; each version keeps its own, so re-rendering
//   an older version (a retried job) never moves its crop.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE media_versions
      ADD COLUMN focal_x double precision CHECK (focal_x BETWEEN 0 AND 1),
      ADD COLUMN focal_y double precision CHECK (focal_y BETWEEN 0 AND 1);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE media_versions DROP COLUMN IF EXISTS focal_y, DROP COLUMN IF EXISTS focal_x;
  `);
}
