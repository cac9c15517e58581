import type { Knex } from 'knex';

// Weather and traffic delivery (docs/weather-traffic.md): the presented JSON text of the stored
// snapshots, written once at store time so a listener read only wraps it with timezone and freshness
// (jsonb would reorder the keys of every snapshot on the way out).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE weather_snapshots ADD COLUMN snapshots_json text;
    ALTER TABLE traffic_snapshots ADD COLUMN snapshot_json text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE traffic_snapshots DROP COLUMN IF EXISTS snapshot_json;
    ALTER TABLE weather_snapshots DROP COLUMN IF EXISTS snapshots_json;
  `);
}
