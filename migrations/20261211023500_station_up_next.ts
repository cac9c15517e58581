import type { Knex } from 'knex';

// stations.up_next: the station's up-next setting `{enabled, count}` (docs/now-playing.md#up-next);
// `{}` reads as the defaults (off, 1 item).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations ADD COLUMN up_next jsonb NOT NULL DEFAULT '{}'::jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations DROP COLUMN IF EXISTS up_next`);
}
