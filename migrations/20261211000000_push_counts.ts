import type { Knex } from 'knex';

// Push notification counts kept on the notification row, so the view (polled by dashboards while a big
// notification sends) reads one row instead of counting every delivery row:
// - sent_count, failed_count, pruned_count (pending = targeted − the three); a statement trigger on
//   push_deliveries adds each statement's state changes (its transition tables: new states counted in,
//   old states counted out), so every path that moves a delivery (outcomes, cancel, expiry, abandoned
//   claims, Expo receipts) keeps them right. Delivery rows are inserted `pending` and removed only with
//   their notification, so inserts and deletes change no count.
// - push_deliveries is keyed by (notification_id, seq): a claim is a seq range and outcomes are written
//   by seq; the token_hash key was one more index to fill for every targeted device (a device is
//   targeted once per notification: push_devices is unique by (station_id, token_hash)).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE push_notifications
      ADD COLUMN sent_count integer NOT NULL DEFAULT 0,
      ADD COLUMN failed_count integer NOT NULL DEFAULT 0,
      ADD COLUMN pruned_count integer NOT NULL DEFAULT 0;

    UPDATE push_notifications n
       SET sent_count = c.sent, failed_count = c.failed, pruned_count = c.pruned
      FROM (SELECT notification_id,
                   count(*) FILTER (WHERE state = 'sent') AS sent,
                   count(*) FILTER (WHERE state = 'failed') AS failed,
                   count(*) FILTER (WHERE state = 'pruned') AS pruned
              FROM push_deliveries GROUP BY notification_id) c
     WHERE n.id = c.notification_id;

    CREATE FUNCTION push_delivery_counts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE push_notifications n
         SET sent_count = n.sent_count + d.sent, failed_count = n.failed_count + d.failed, pruned_count = n.pruned_count + d.pruned
        FROM (SELECT notification_id, sum(sent)::int AS sent, sum(failed)::int AS failed, sum(pruned)::int AS pruned
                FROM (SELECT notification_id, (state = 'sent')::int AS sent, (state = 'failed')::int AS failed,
                             (state = 'pruned')::int AS pruned FROM moved_to
                      UNION ALL
                      SELECT notification_id, -(state = 'sent')::int, -(state = 'failed')::int, -(state = 'pruned')::int
                        FROM moved_from) s
               GROUP BY notification_id) d
       WHERE n.id = d.notification_id AND (d.sent <> 0 OR d.failed <> 0 OR d.pruned <> 0);
      RETURN NULL;
    END $$;

    CREATE TRIGGER push_delivery_counts AFTER UPDATE ON push_deliveries
      REFERENCING OLD TABLE AS moved_from NEW TABLE AS moved_to
      FOR EACH STATEMENT EXECUTE FUNCTION push_delivery_counts();

    ALTER TABLE push_deliveries DROP CONSTRAINT push_deliveries_pkey;
    ALTER TABLE push_deliveries ADD CONSTRAINT push_deliveries_pkey PRIMARY KEY USING INDEX push_deliveries_seq_idx;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE push_deliveries DROP CONSTRAINT push_deliveries_pkey;
    ALTER TABLE push_deliveries ADD CONSTRAINT push_deliveries_pkey PRIMARY KEY (notification_id, token_hash);
    CREATE UNIQUE INDEX push_deliveries_seq_idx ON push_deliveries (notification_id, seq);
    DROP TRIGGER IF EXISTS push_delivery_counts ON push_deliveries;
    DROP FUNCTION IF EXISTS push_delivery_counts();
    ALTER TABLE push_notifications DROP COLUMN sent_count, DROP COLUMN failed_count, DROP COLUMN pruned_count;
  `);
}
