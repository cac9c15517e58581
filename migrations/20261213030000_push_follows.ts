import type { Knex } from 'knex';

// Follows and reminders (docs/push.md#follows-and-reminders):
// - push_follows: a device's follows of a program or a presenter (exactly one of the two), each with
//   its `remind_before_minutes`. They go with the device (unregistered, or pruned as a dead token) and
//   with the program or presenter (removed by the admin DELETE routes).
// - push_deliveries.broadcast_id: a reminder's delivery rows name its broadcast, written in the
//   transaction that creates the reminder notification; the unique (broadcast_id, token_hash) is what
//   makes a device reminded at most once of a broadcast, across edits, retries, several workers and a
//   worker's death (removed with the notification after 30 days, when the broadcast is long over).
// - push_notifications.broadcast_id / due_at: a reminder is a notification (`source: "reminder"`) of
//   one (broadcast, due time); push_reminder_groups keeps that to one firing even when two workers fire
//   it at once.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE push_follows (
      station_id text NOT NULL,
      token_hash text NOT NULL,
      position integer NOT NULL,
      program_id uuid REFERENCES programs(id) ON DELETE CASCADE,
      presenter_id uuid REFERENCES presenters(id) ON DELETE CASCADE,
      remind_before_minutes integer NOT NULL DEFAULT 0 CHECK (remind_before_minutes IN (0, 5, 10, 15, 30, 60)),
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (station_id, token_hash) REFERENCES push_devices (station_id, token_hash) ON DELETE CASCADE,
      CHECK ((program_id IS NULL) <> (presenter_id IS NULL)),
      PRIMARY KEY (station_id, token_hash, position)
    );
    CREATE UNIQUE INDEX push_follows_program_idx ON push_follows (program_id, station_id, token_hash) WHERE program_id IS NOT NULL;
    CREATE UNIQUE INDEX push_follows_presenter_idx ON push_follows (presenter_id, station_id, token_hash) WHERE presenter_id IS NOT NULL;
    -- The tick asks, per upcoming broadcast and remindBeforeMinutes, whether anyone follows: one probe each.
    CREATE INDEX push_follows_program_before_idx ON push_follows (program_id, remind_before_minutes) WHERE program_id IS NOT NULL;
    CREATE INDEX push_follows_presenter_before_idx ON push_follows (presenter_id, remind_before_minutes) WHERE presenter_id IS NOT NULL;

    ALTER TABLE push_notifications ADD COLUMN broadcast_id uuid, ADD COLUMN due_at timestamptz;

    -- Each (broadcast, due time) is fired once: the row is taken in the transaction that creates its
    -- notification (notification_id null when nobody was left to remind). A second worker firing it
    -- waits on the first's row, then finds it taken.
    CREATE TABLE push_reminder_groups (
      broadcast_id uuid NOT NULL,
      due_at timestamptz NOT NULL,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      notification_id uuid REFERENCES push_notifications(id) ON DELETE SET NULL,
      fired_at timestamptz NOT NULL,
      PRIMARY KEY (broadcast_id, due_at)
    );
    CREATE INDEX push_reminder_groups_fired_idx ON push_reminder_groups (fired_at);

    -- A reminder's delivery rows name its broadcast: a device is reminded of a broadcast at most once.
    ALTER TABLE push_deliveries ADD COLUMN broadcast_id uuid;
    CREATE UNIQUE INDEX push_deliveries_reminded_idx ON push_deliveries (broadcast_id, token_hash) WHERE broadcast_id IS NOT NULL;

    -- The reminders tick reads the public broadcasts of the next hour of every station every few seconds.
    CREATE INDEX broadcasts_public_starts_idx ON broadcasts (starts_at) WHERE published AND NOT cancelled;
    -- …and looks for reminders whose sending job could not be queued.
    CREATE INDEX push_notifications_queued_idx ON push_notifications (created_at) WHERE status = 'queued';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS broadcasts_public_starts_idx;
    DROP INDEX IF EXISTS push_notifications_queued_idx;
    DROP INDEX IF EXISTS push_deliveries_reminded_idx;
    ALTER TABLE push_deliveries DROP COLUMN IF EXISTS broadcast_id;
    DROP TABLE IF EXISTS push_reminder_groups, push_follows;
    ALTER TABLE push_notifications DROP COLUMN IF EXISTS broadcast_id, DROP COLUMN IF EXISTS due_at;
  `);
}
