import type { Knex } from 'knex';

// Webhooks (docs/webhooks.md): a station's endpoints and the log of their delivery attempts.
// Signing secrets are stored encrypted (AES-GCM, src/domains/webhooks/secrets.ts); during a rotation the
// previous one is kept until `previous_secret_expires_at`. `failing_since` is the first failed attempt
// with no success since (an endpoint failing for 3 days is switched off). The log has one row per
// attempt, unique per (webhook, event, attempt) so a delivery job run twice after a crash writes once.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE webhooks (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      url text NOT NULL,
      events text[] NOT NULL,
      description text,
      active boolean NOT NULL DEFAULT true,
      secret_enc text NOT NULL,
      previous_secret_enc text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX webhooks_station_idx ON webhooks (station_id, created_at);

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      webhook_id uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
      event_id text NOT NULL,
      type text NOT NULL,
      attempt integer NOT NULL,
      status text NOT NULL,
      http_status integer,
      duration_ms integer,
      error text,
      response_body text,
      created_at timestamptz NOT NULL,
      next_attempt_at timestamptz,
      UNIQUE (webhook_id, event_id, attempt)
    );
    CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS webhook_deliveries, webhooks');
}
