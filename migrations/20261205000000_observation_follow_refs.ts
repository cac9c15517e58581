import type { Knex } from 'knex';

// An observation's broadcast_id and rundown_item_id say what rundown following tied it to. As foreign
// keys with ON DELETE SET NULL they made every deleted rundown item (a rundown PUT that drops items) and
// every deleted broadcast scan the whole observations table once — no index backs those columns, and one
// would cost the follow UPDATE its HOT path (an index on a column it sets). They are now plain
// references, like a log's: the readers (following's newest-followed look-up, the on-air rebuild) only
// count an observation whose item still exists in that broadcast's rundown, which is what SET NULL gave.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE observations DROP CONSTRAINT IF EXISTS observations_broadcast_id_fkey;
    ALTER TABLE observations DROP CONSTRAINT IF EXISTS observations_rundown_item_id_fkey;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE observations o SET broadcast_id = NULL WHERE broadcast_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM broadcasts b WHERE b.id = o.broadcast_id);
    UPDATE observations o SET rundown_item_id = NULL WHERE rundown_item_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM rundown_items i WHERE i.id = o.rundown_item_id);
    ALTER TABLE observations ADD CONSTRAINT observations_broadcast_id_fkey FOREIGN KEY (broadcast_id) REFERENCES broadcasts(id) ON DELETE SET NULL;
    ALTER TABLE observations ADD CONSTRAINT observations_rundown_item_id_fkey FOREIGN KEY (rundown_item_id) REFERENCES rundown_items(id) ON DELETE SET NULL;
  `);
}
