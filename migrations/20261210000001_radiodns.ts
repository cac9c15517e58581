import type { Knex } from 'knex';

// Hybrid radio (docs/radiodns.md#the-radiodns-station-setting):
// - stations.radiodns: the station's RadioDNS setting (names, fqdn, serviceIdentifier, bearers, logo,
//   genres); '{}' is "not configured" (enabled false).
// - radiodns_logos: the logo renditions SI.xml points at (PNG, letterboxed), rendered by the worker per
//   logo version; one row per size.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE stations ADD COLUMN radiodns jsonb NOT NULL DEFAULT '{}'::jsonb;
    -- SI.xml finds its services by host name on every miss of its cache.
    CREATE INDEX stations_radiodns_fqdn_idx ON stations ((radiodns->>'fqdn')) WHERE radiodns->>'fqdn' IS NOT NULL;
    CREATE TABLE radiodns_logos (
      version_id uuid NOT NULL REFERENCES media_versions(id) ON DELETE CASCADE,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      width integer NOT NULL,
      height integer NOT NULL,
      etag text NOT NULL,
      bytes bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (version_id, width, height)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS radiodns_logos;
    ALTER TABLE stations DROP COLUMN IF EXISTS radiodns;
  `);
}
