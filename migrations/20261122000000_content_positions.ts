import type { Knex } from 'knex';

// Snapshot walks of content lists (docs/content.md, "Walks are snapshots").
// - content_types.position_seq: the type's position clock. Every change of a published record's list
//   position (publish, republish, re-presentation, unpublish) takes the next value under the type's
//   row lock, so within a type seq order is commit order. A first page reads it as its `asOf`.
// - published_records.position_from: the seq from which the record holds its current position
//   (0 for records published before this migration: valid in every snapshot).
// - record_position_history: positions records held before they moved or were unpublished, valid for
//   snapshots valid_from <= asOf < valid_until. Current positions stay in published_records only, so
//   this table grows with moves, not with records. Deep pages look up the rows closed after their
//   asOf through the (station_id, type, valid_until) index.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE content_types ADD COLUMN position_seq bigint NOT NULL DEFAULT 0;
    ALTER TABLE published_records ADD COLUMN position_from bigint NOT NULL DEFAULT 0;

    CREATE TABLE record_position_history (
      record_id uuid NOT NULL REFERENCES records(id) ON DELETE CASCADE,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      type text NOT NULL,
      published_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      valid_from bigint NOT NULL,
      valid_until bigint NOT NULL,
      CHECK (valid_from < valid_until)
    );
    CREATE INDEX record_position_history_closed ON record_position_history (station_id, type, valid_until)
      INCLUDE (valid_from, published_at, updated_at, record_id);
    CREATE INDEX record_position_history_record_idx ON record_position_history (record_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS record_position_history;
    ALTER TABLE published_records DROP COLUMN IF EXISTS position_from;
    ALTER TABLE content_types DROP COLUMN IF EXISTS position_seq;
  `);
}
