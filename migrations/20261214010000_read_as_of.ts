import type { Knex } from 'knex';

// When a listener answer that carries `asOf` (the current broadcast, `live`) was first computed, per
// answer (station, read, stream), with a digest of what it shows: every web process, and a restarted
// one, recomputing the same answer takes the same instant, so its ETag holds (src/lib/asOf.ts).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE read_as_of (
      key text PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      digest text NOT NULL,
      as_of timestamptz NOT NULL
    );
    CREATE INDEX read_as_of_station_idx ON read_as_of (station_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS read_as_of`);
}
