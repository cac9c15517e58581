import type { Knex } from 'knex';

// Rundown following reads the live broadcast's rundown on every observation; building its JSON there
// (json_agg over the items, two epoch conversions each) was most of the following load query's time.
// rundown_plans keeps that JSON per broadcast, written when the items change — by a statement-level
// trigger, so every writer (the rundown PUT, broadcast moves, the import bundle, direct inserts in
// tests and benchmarks) keeps it right without knowing of it. A broadcast without items has no plan.

const ITEM_JSON = `json_build_object('id', i.id, 'position', i.position, 'kind', i.kind, 'artist', i.artist, 'title', i.title,
                    'duration_seconds', i.duration_seconds,
                    'starts_ms', (extract(epoch FROM i.planned_starts_at) * 1000)::float8,
                    'ends_ms', (extract(epoch FROM i.planned_ends_at) * 1000)::float8)`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE rundown_plans (
      broadcast_id uuid PRIMARY KEY REFERENCES broadcasts(id) ON DELETE CASCADE,
      items json NOT NULL
    );

    CREATE FUNCTION rundown_plans_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- "changed" is the statement's transition table (new rows, or old rows for a delete).
      DELETE FROM rundown_plans p
       WHERE p.broadcast_id IN (SELECT DISTINCT broadcast_id FROM changed)
         AND NOT EXISTS (SELECT 1 FROM rundown_items i WHERE i.broadcast_id = p.broadcast_id);
      INSERT INTO rundown_plans (broadcast_id, items)
      SELECT i.broadcast_id, json_agg(${ITEM_JSON} ORDER BY i.position)
        FROM rundown_items i
       WHERE i.broadcast_id IN (SELECT DISTINCT broadcast_id FROM changed)
       GROUP BY i.broadcast_id
      ON CONFLICT (broadcast_id) DO UPDATE SET items = excluded.items;
      RETURN NULL;
    END $$;

    CREATE TRIGGER rundown_plans_after_insert AFTER INSERT ON rundown_items
      REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION rundown_plans_refresh();
    CREATE TRIGGER rundown_plans_after_update AFTER UPDATE ON rundown_items
      REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION rundown_plans_refresh();
    CREATE TRIGGER rundown_plans_after_delete AFTER DELETE ON rundown_items
      REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION rundown_plans_refresh();

    INSERT INTO rundown_plans (broadcast_id, items)
    SELECT i.broadcast_id, json_agg(${ITEM_JSON} ORDER BY i.position) FROM rundown_items i GROUP BY i.broadcast_id;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS rundown_plans_after_insert ON rundown_items;
    DROP TRIGGER IF EXISTS rundown_plans_after_update ON rundown_items;
    DROP TRIGGER IF EXISTS rundown_plans_after_delete ON rundown_items;
    DROP FUNCTION IF EXISTS rundown_plans_refresh();
    DROP TABLE IF EXISTS rundown_plans;
  `);
}
