import type { Knex } from 'knex';

// Weather and traffic delivery (docs/weather-traffic.md).
// - *_json: the presented JSON text of the stored snapshots, written once at store time so a listener
//   read only wraps it with timezone and freshness (jsonb would reorder every snapshot's keys).
// - feed_sources: the third-party provider a worker polls for a station's weather or traffic
//   (one per station and feed); `settings` holds the provider parameters, API keys included.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE weather_snapshots ADD COLUMN snapshots_json text;
    ALTER TABLE traffic_snapshots ADD COLUMN snapshot_json text;

    CREATE TABLE feed_sources (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      feed text NOT NULL CHECK (feed IN ('weather', 'traffic')),
      provider text NOT NULL,
      settings jsonb NOT NULL,
      interval_seconds integer NOT NULL CHECK (interval_seconds >= 60),
      last_polled_at timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (station_id, feed)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS feed_sources;
    ALTER TABLE traffic_snapshots DROP COLUMN IF EXISTS snapshot_json;
    ALTER TABLE weather_snapshots DROP COLUMN IF EXISTS snapshots_json;
  `);
}
