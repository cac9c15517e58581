import type { Knex } from 'knex';

// Listener time (docs/realtime.md#listener-time-stream). A feed
// connection with `stream=` gets the now-playing and on-air rows as they were `latencySeconds` (at most
// 600) ago. `feed_rows` keeps only the current row, so a gateway that has just started could not say what
// a listener of a delayed stream hears now. Every version of those two rows is kept here, written by a
// trigger on `feed_rows` (so every writer — ingest, following, the schedule jobs, admin — is covered
// without a line of its own), and pruned hourly with the feed's tombstones (src/feed/rows.ts): older than
// an hour, except the newest of each row. The gateway reads the last ten minutes of a station's versions
// once, when its first delayed connection arrives (src/gateway/store.ts, `heardVersions`).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE feed_row_versions (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      kind text NOT NULL,
      entry text NOT NULL,
      seq bigint NOT NULL,
      data jsonb,
      deleted boolean NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (station_id, seq)
    );
    CREATE INDEX feed_row_versions_time_idx ON feed_row_versions (station_id, updated_at);

    CREATE FUNCTION feed_row_versions_keep() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO feed_row_versions (station_id, kind, entry, seq, data, deleted, updated_at)
      VALUES (NEW.station_id, NEW.kind, NEW.entry, NEW.seq, NEW.data, NEW.deleted, NEW.updated_at)
      ON CONFLICT (station_id, seq) DO NOTHING;
      RETURN NULL;
    END $$;

    CREATE TRIGGER feed_row_versions_after_write AFTER INSERT OR UPDATE ON feed_rows
      FOR EACH ROW WHEN (NEW.kind IN ('now-playing', 'on-air')) EXECUTE FUNCTION feed_row_versions_keep();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS feed_row_versions_after_write ON feed_rows;
    DROP FUNCTION IF EXISTS feed_row_versions_keep();
    DROP TABLE IF EXISTS feed_row_versions;
  `);
}
