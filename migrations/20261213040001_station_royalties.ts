import type { Knex } from 'knex';

// The audience feature's station setting `royalties: {serviceName, transmissionCategory}`
// (docs/audience.md#filing-the-soundexchange-report-of-use), registered from src/domains/audience/station.ts;
// what the census report of use needs.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations ADD COLUMN royalties jsonb NOT NULL DEFAULT '{}'::jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations DROP COLUMN royalties`);
}
