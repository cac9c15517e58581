import type { Knex } from 'knex';

// Artwork you can trust (docs/now-playing.md#artwork-you-can-trust): kept images, check results per URL, operator pins and blocks,
// the track art each observation shows (precomputed when it is resolved, so listener reads stay a
// column read), program / presenter images and the station's `artwork` setting.
// - artwork_images: one kept image per station and SHA-256 of its bytes; a media version of the
//   station whose files hold the original and the square variants 300 / 600 / 1200.
// - artwork_checks: the last check of a URL per station (minSize and the logo are the station's).
//   A failure is remembered 24 h (expires_at); a kept result points at its image.
// - observations.artist_key / title_key: the pin match form (NFKC, case folded, trimmed, spaces
//   collapsed), written when the observation is resolved. observations.catalogue_url: what the
//   catalogue lookup found (the ingest's own URL stays in artwork_url). observations.artwork_view: the
//   resolved `artworkUrl` / `artwork` of the track; null until resolved.
// - listed_media: versions listeners may fetch through the published-media route besides those of
//   published records: kept artwork and the fallback images (programs, presenters, the station's).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE media_files DROP CONSTRAINT IF EXISTS media_files_variant_check;
    ALTER TABLE media_files ADD CONSTRAINT media_files_variant_check
      CHECK (variant IN ('original', 'thumb', 'display', 'card', 'square', '300', '600', '1200'));

    CREATE TABLE artwork_images (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      sha256 text NOT NULL,
      version_id uuid NOT NULL REFERENCES media_versions(id) ON DELETE CASCADE,
      width integer NOT NULL,
      height integer NOT NULL,
      dhash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (station_id, sha256)
    );

    CREATE TABLE artwork_checks (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      url_hash text NOT NULL,
      url text NOT NULL,
      source text NOT NULL,
      status text NOT NULL CHECK (status IN ('kept', 'rejected')),
      reason text,
      image_id uuid REFERENCES artwork_images(id) ON DELETE SET NULL,
      checked_at timestamptz NOT NULL,
      expires_at timestamptz,
      PRIMARY KEY (station_id, url_hash)
    );
    CREATE INDEX artwork_checks_recent_idx ON artwork_checks (station_id, checked_at DESC);

    CREATE TABLE artwork_pins (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      id text NOT NULL,
      match_artist text NOT NULL,
      match_title text,
      artist_key text NOT NULL,
      title_key text,
      image_kind text NOT NULL CHECK (image_kind IN ('version', 'url', 'none')),
      image_version_id uuid,
      image_url text,
      status text NOT NULL CHECK (status IN ('pending', 'kept', 'rejected')),
      reason text,
      image_id uuid REFERENCES artwork_images(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (station_id, id)
    );
    CREATE INDEX artwork_pins_match_idx ON artwork_pins (station_id, artist_key);

    CREATE TABLE artwork_blocks (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      hash text NOT NULL,
      url text,
      version_id uuid,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX artwork_blocks_station_idx ON artwork_blocks (station_id, created_at);

    ALTER TABLE observations
      ADD COLUMN artist_key text,
      ADD COLUMN title_key text,
      ADD COLUMN catalogue_url text,
      ADD COLUMN artwork_view jsonb;
    CREATE INDEX observations_artwork_match_idx ON observations (station_id, artist_key, title_key) WHERE artist_key IS NOT NULL;

    ALTER TABLE programs ADD COLUMN image_version_id uuid REFERENCES media_versions(id) ON DELETE SET NULL;
    ALTER TABLE presenters ADD COLUMN image_version_id uuid REFERENCES media_versions(id) ON DELETE SET NULL;
    ALTER TABLE stations ADD COLUMN artwork jsonb NOT NULL DEFAULT '{}'::jsonb;

    CREATE VIEW listed_media AS
      SELECT version_id, station_id FROM artwork_images
      UNION ALL SELECT image_version_id, station_id FROM programs WHERE image_version_id IS NOT NULL
      UNION ALL SELECT image_version_id, station_id FROM presenters WHERE image_version_id IS NOT NULL
      UNION ALL SELECT (artwork->>'stationImageVersionId')::uuid, id FROM stations
        WHERE artwork->>'stationImageVersionId' ~ '^[0-9a-f-]{36}$'
      UNION ALL SELECT (radiodns->>'logoVersionId')::uuid, id FROM stations
        WHERE radiodns->>'logoVersionId' ~ '^[0-9a-f-]{36}$';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP VIEW IF EXISTS listed_media;
    ALTER TABLE stations DROP COLUMN IF EXISTS artwork;
    ALTER TABLE presenters DROP COLUMN IF EXISTS image_version_id;
    ALTER TABLE programs DROP COLUMN IF EXISTS image_version_id;
    DROP INDEX IF EXISTS observations_artwork_match_idx;
    ALTER TABLE observations DROP COLUMN IF EXISTS artwork_view, DROP COLUMN IF EXISTS catalogue_url,
      DROP COLUMN IF EXISTS title_key, DROP COLUMN IF EXISTS artist_key;
    DROP TABLE IF EXISTS artwork_blocks;
    DROP TABLE IF EXISTS artwork_pins;
    DROP TABLE IF EXISTS artwork_checks;
    DROP TABLE IF EXISTS artwork_images;
    DELETE FROM media_files WHERE variant IN ('300', '600', '1200');
    ALTER TABLE media_files DROP CONSTRAINT IF EXISTS media_files_variant_check;
    ALTER TABLE media_files ADD CONSTRAINT media_files_variant_check
      CHECK (variant IN ('original', 'thumb', 'display', 'card', 'square'));
  `);
}
