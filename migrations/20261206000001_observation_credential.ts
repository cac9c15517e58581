import type { Knex } from 'knex';

// The play log (docs/now-playing.md#play-log-music-reporting) names the credential that reported each observation. A plain
// reference, like broadcast_id: a revoked or deleted credential leaves the log readable (its label is
// then unknown), and no index is needed (the play log reads by station and time).

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE observations ADD COLUMN IF NOT EXISTS credential_id uuid');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE observations DROP COLUMN IF EXISTS credential_id');
}
