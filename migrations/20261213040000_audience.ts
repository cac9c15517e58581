import type { Knex } from 'knex';

// Audience (docs/audience.md):
// - listener_samples: one listener count per (station, stream key, instant), polled or pushed; a pushed
//   sample for the same instant replaces the earlier one. Kept 35 days (the audience.prune job).
// - stream_polls: the poller's state per stream — the last good sample, why the last poll stored nothing,
//   and the consecutive failures its backoff counts.
// - play_performances: a play's figures per stream, fixed when the play has ended plus one poll
//   interval and kept with the play log (they outlive the samples they were computed from).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE listener_samples (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      stream_key text NOT NULL,
      at timestamptz NOT NULL,
      listeners integer NOT NULL CHECK (listeners >= 0),
      source text NOT NULL CHECK (source IN ('poll', 'push')),
      PRIMARY KEY (station_id, stream_key, at)
    );
    CREATE INDEX listener_samples_at_idx ON listener_samples (at);

    CREATE TABLE stream_polls (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      stream_key text NOT NULL,
      last_polled_at timestamptz,
      last_sample_at timestamptz,
      last_error text,
      failures integer NOT NULL DEFAULT 0,
      PRIMARY KEY (station_id, stream_key)
    );

    CREATE TABLE play_performances (
      observation_id uuid PRIMARY KEY REFERENCES observations(id) ON DELETE CASCADE,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      -- The play's on-air interval when it was fixed: a late pushed sample finds the plays it touches here.
      started_at timestamptz NOT NULL,
      ended_at timestamptz NOT NULL,
      by_stream jsonb NOT NULL,
      performances integer,
      computed_at timestamptz NOT NULL
    );
    CREATE INDEX play_performances_station_idx ON play_performances (station_id, started_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS play_performances, stream_polls, listener_samples`);
}
