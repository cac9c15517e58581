import type { Knex } from 'knex';

// Podcasts (docs/podcasts.md#the-podcasts-station-setting): stations.podcasts holds the station's
// podcast setting (episode type, author, owner, language, categories, cover image…); '{}' is "not
// configured" (enabled false).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations ADD COLUMN podcasts jsonb NOT NULL DEFAULT '{}'::jsonb;`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations DROP COLUMN IF EXISTS podcasts;`);
}
