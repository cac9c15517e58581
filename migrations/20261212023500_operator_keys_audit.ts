import type { Knex } from 'knex';

// Operator keys and the audit trail (docs/operations.md#operator-keys-and-the-audit-log):
// - operator_keys: `wvo_` keys stored as SHA-256 hashes, each with its stations (`all_stations` for "*")
//   and scopes; revoked keys keep their row (DELETE sets revoked_at) so audit entries keep their label.
// - audit_log: one row per authenticated admin write. No foreign keys: an entry outlives its key and its
//   station; kept 400 days (workers/auditPrune.ts). Read newest first per station and overall.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE operator_keys (
      id uuid PRIMARY KEY,
      label text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      all_stations boolean NOT NULL,
      station_ids text[] NOT NULL DEFAULT '{}',
      scopes text[] NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      rotated_at timestamptz,
      last_used_at timestamptz,
      created_at timestamptz NOT NULL
    );

    CREATE TABLE audit_log (
      id uuid PRIMARY KEY,
      created_at timestamptz NOT NULL,
      key_id text NOT NULL,
      key_label text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      station_id text,
      action text NOT NULL,
      target text,
      status smallint NOT NULL,
      request_id text NOT NULL,
      client_ip text NOT NULL
    );
    CREATE INDEX audit_log_station ON audit_log (station_id, created_at DESC, id DESC);
    CREATE INDEX audit_log_all ON audit_log (created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE audit_log; DROP TABLE operator_keys;');
}
