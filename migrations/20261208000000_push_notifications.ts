import type { Knex } from 'knex';

// Push notifications (docs/push.md#for-operators): a station's provider credentials (secret
// parts encrypted with AES-GCM under a key derived from WAVELINE_SECRET), its notifications, and one
// delivery row per (notification, targeted device), numbered by `seq`. Each device gets a notification
// at most once: a job reserves the next range of `seq` (`claimed_seq` on the notification row) and
// records it in `push_claims` in one transaction, before any request goes out; a `pending` row inside
// the reserved part whose claim is gone or stale (its job died) is counted `failed`, never sent again.
// Only the outcome writes a delivery row (no index covers `state`: HOT updates, fillfactor 80).
// Deliveries and claims are removed with their notification (kept 30 days).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE push_credentials (
      station_id text PRIMARY KEY REFERENCES stations(id) ON DELETE CASCADE,
      provider text NOT NULL,
      settings jsonb NOT NULL,
      secret_enc text,
      updated_at timestamptz NOT NULL
    );

    CREATE TABLE push_notifications (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      provider text NOT NULL,
      topic text NOT NULL,
      source text NOT NULL,
      record_id uuid,
      record_revision integer,
      title text NOT NULL,
      body text,
      url text,
      data jsonb NOT NULL,
      ttl_seconds integer NOT NULL,
      collapse_key text,
      idempotency_key text,
      request_hash text,
      status text NOT NULL,
      error text,
      targeted integer NOT NULL DEFAULT 0,
      claimed_seq integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz
    );
    CREATE INDEX push_notifications_list_idx ON push_notifications (station_id, created_at DESC, id DESC);
    CREATE INDEX push_notifications_idempotency_idx ON push_notifications (station_id, idempotency_key, created_at DESC)
      WHERE idempotency_key IS NOT NULL;
    CREATE UNIQUE INDEX push_notifications_record_revision_idx ON push_notifications (record_id, record_revision)
      WHERE record_id IS NOT NULL;
    CREATE INDEX push_notifications_created_idx ON push_notifications (created_at);

    CREATE TABLE push_deliveries (
      notification_id uuid NOT NULL REFERENCES push_notifications(id) ON DELETE CASCADE,
      token_hash text NOT NULL,
      token text NOT NULL,
      seq integer NOT NULL,
      state text NOT NULL,
      ticket_id text,
      PRIMARY KEY (notification_id, token_hash)
    ) WITH (fillfactor = 80);
    CREATE UNIQUE INDEX push_deliveries_seq_idx ON push_deliveries (notification_id, seq);

    CREATE TABLE push_claims (
      notification_id uuid NOT NULL REFERENCES push_notifications(id) ON DELETE CASCADE,
      lo integer NOT NULL,
      hi integer NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (notification_id, lo)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS push_claims, push_deliveries, push_notifications, push_credentials');
}
