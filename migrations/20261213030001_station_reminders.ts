import type { Knex } from 'knex';

// The station setting `reminders: {enabled, body, bodySoon}` (docs/push.md#body-templates-the-station-setting-reminders),
// registered by src/domains/reminders/station.ts; '{}' is "every field at its default".

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations ADD COLUMN reminders jsonb NOT NULL DEFAULT '{}'::jsonb;`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations DROP COLUMN IF EXISTS reminders;`);
}
