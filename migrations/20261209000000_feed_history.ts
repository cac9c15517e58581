import type { Knex } from 'knex';

// Resume from a cursor (docs/realtime.md#resume-reset-and-synced). A cursor names a
// station's history by `feed_epoch` and a position in it by `feed_seq`. `feed_epoch` is random per
// station: an operator who restores a backup or resets a station's feed gives it a new one, and every
// cursor of the old history becomes a reset. Tombstones (deleted feed rows) older than the history
// window are pruned; `feed_pruned_seq` is the highest seq pruned so far — a cursor below it may have
// missed a delete that is no longer kept, so it is a reset too.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE stations
      ADD COLUMN feed_epoch text NOT NULL DEFAULT substr(md5(random()::text || clock_timestamp()::text), 1, 8),
      ADD COLUMN feed_pruned_seq bigint NOT NULL DEFAULT 0;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stations DROP COLUMN feed_epoch, DROP COLUMN feed_pruned_seq;`);
}
