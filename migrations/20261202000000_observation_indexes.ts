import type { Knex } from 'knex';

// Every observation insert maintains each index of the table. Three indexes of the first migration
// were superseded by the receipt_seq ones of observation_following (which break ties by receipt order
// instead of by the clock) and no query uses them any more: drop them, so an ingest writes five index
// entries instead of eight.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS observations_latest_idx, observations_received_idx, observations_history_idx;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX IF NOT EXISTS observations_latest_idx ON observations (station_id, sort_at DESC, received_at DESC);
    CREATE INDEX IF NOT EXISTS observations_received_idx ON observations (station_id, received_at DESC);
    CREATE INDEX IF NOT EXISTS observations_history_idx ON observations (station_id, sort_at DESC, received_at DESC, id DESC) WHERE is_playing;
  `);
}
