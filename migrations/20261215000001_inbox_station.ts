import type { Knex } from 'knex';

// The station setting `inbox` (docs/inbox.md, "Station setting"), registered by
// src/domains/inbox/station.ts; '{}' is "every field at its default". The module `inbox` lives in the
// station's `modules` like every module (off unless switched on).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations ADD COLUMN inbox jsonb NOT NULL DEFAULT '{}'::jsonb;`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations DROP COLUMN IF EXISTS inbox;`);
}
