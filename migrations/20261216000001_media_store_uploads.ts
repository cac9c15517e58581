import type { Knex } from 'knex';

// Pre-signed uploads (docs/media.md, "Large uploads from a browser or a CMS"): what an upload was
// announced as, where its bytes go (store and key, chosen when it is created), the hash of the
// capability token of a Waveline upload URL (stores that cannot sign one), and until when it is valid.
// The version id is chosen up front, so a second completion finds the version the first one made.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE media_uploads (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      version_id uuid NOT NULL UNIQUE,
      asset_id uuid,
      mime text NOT NULL,
      bytes bigint NOT NULL,
      sha256 text,
      alt text NOT NULL DEFAULT '',
      credits text NOT NULL DEFAULT '',
      store text NOT NULL,
      object_key text NOT NULL,
      token_hash text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX media_uploads_expires_idx ON media_uploads (expires_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS media_uploads`);
}
