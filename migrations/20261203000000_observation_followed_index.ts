import type { Knex } from 'knex';

// The on-air row names the newest observation of the live broadcast that rundown following tied to an
// item (and the newest matched one). Read through the station's sort index that meant reading every
// observation of the broadcast and sorting them; this index gives the newest at once, whatever the
// planner's statistics say. Only followed observations are in it.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX observations_followed_idx ON observations (broadcast_id, sort_at DESC, receipt_seq DESC)
      WHERE rundown_item_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS observations_followed_idx');
}
