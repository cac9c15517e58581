import type { Knex } from 'knex';

// Now-playing ingest needs two things the initial table does not give:
// - `receipt_seq`: the order in which a station's observations were stored. `received_at` comes from
//   the clock and can tie (two posts in one millisecond, a test clock standing still); "latest" breaks
//   sort_at ties by later receipt and the collapse rule compares with the most recently received one.
// - `followed_at`: null while rundown following is still pending (the stored outcome is then the
//   provisional `recorded`), set once the worker has decided the outcome.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE observations
      ADD COLUMN receipt_seq bigint GENERATED ALWAYS AS IDENTITY,
      ADD COLUMN followed_at timestamptz;
    CREATE INDEX observations_latest_seq_idx ON observations (station_id, sort_at DESC, receipt_seq DESC);
    CREATE INDEX observations_receipt_idx ON observations (station_id, receipt_seq DESC);
    CREATE INDEX observations_history_seq_idx ON observations (station_id, sort_at DESC, receipt_seq DESC) WHERE is_playing;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS observations_history_seq_idx, observations_receipt_idx, observations_latest_seq_idx;
    ALTER TABLE observations DROP COLUMN IF EXISTS followed_at, DROP COLUMN IF EXISTS receipt_seq;
  `);
}
