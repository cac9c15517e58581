import type { Knex } from 'knex';

// The whole domain's shape. Later migrations may add columns; the tables and keys are decided here.
// Timestamps are timestamptz throughout. Listener reads only ever touch the projection tables
// (published_records, feed_rows, observations, broadcasts…) through the indexes declared below.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE stations (
      id text PRIMARY KEY,
      slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$'),
      name text NOT NULL,
      timezone text NOT NULL,
      profile jsonb NOT NULL DEFAULT '{}'::jsonb,
      active boolean NOT NULL DEFAULT true,
      public_online boolean NOT NULL DEFAULT true,
      modules jsonb NOT NULL DEFAULT '{}'::jsonb,
      entitlements jsonb NOT NULL DEFAULT '{}'::jsonb,
      redistribution jsonb NOT NULL DEFAULT '{}'::jsonb,
      push_provider text CHECK (push_provider IN ('fcm', 'apns', 'expo')),
      artwork_lookup boolean NOT NULL DEFAULT false,
      now_playing_freshness_seconds integer NOT NULL DEFAULT 600 CHECK (now_playing_freshness_seconds > 0),
      rundown_following boolean NOT NULL DEFAULT true,
      feed_seq bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE credentials (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      label text,
      token_hash text NOT NULL UNIQUE,
      scopes text[] NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      last_used_at timestamptz,
      rotated_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX credentials_station_idx ON credentials (station_id);

    CREATE TABLE content_types (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      key text NOT NULL,
      label text NOT NULL,
      current_version integer NOT NULL,
      archived boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (station_id, key)
    );

    CREATE TABLE content_type_versions (
      station_id text NOT NULL,
      key text NOT NULL,
      version integer NOT NULL CHECK (version > 0),
      label text NOT NULL,
      fields jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (station_id, key, version),
      FOREIGN KEY (station_id, key) REFERENCES content_types(station_id, key) ON DELETE CASCADE
    );

    CREATE TABLE records (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      type text NOT NULL,
      latest_revision integer NOT NULL DEFAULT 0,
      published_revision integer,
      first_published_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (station_id, type) REFERENCES content_types(station_id, key)
    );
    CREATE INDEX records_station_type_idx ON records (station_id, type);

    CREATE TABLE record_revisions (
      record_id uuid NOT NULL REFERENCES records(id) ON DELETE CASCADE,
      revision integer NOT NULL CHECK (revision > 0),
      schema_version integer NOT NULL,
      "values" jsonb NOT NULL,
      document jsonb,
      media jsonb NOT NULL DEFAULT '[]'::jsonb,
      related jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (record_id, revision)
    );

    -- The listener projection of a published record: the snapshot as delivered, precomputed at publish.
    CREATE TABLE published_records (
      record_id uuid PRIMARY KEY REFERENCES records(id) ON DELETE CASCADE,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      type text NOT NULL,
      revision integer NOT NULL,
      schema_version integer NOT NULL,
      slug text,
      published_at timestamptz NOT NULL,
      first_published_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      delivered_values jsonb NOT NULL,
      body jsonb NOT NULL
    );
    CREATE INDEX published_records_by_published ON published_records (station_id, type, published_at, record_id);
    CREATE INDEX published_records_by_updated ON published_records (station_id, type, updated_at, record_id);
    CREATE INDEX published_records_values ON published_records USING gin (delivered_values jsonb_path_ops);

    -- Every slug a published record of a type has used; the newest use wins a clash.
    CREATE TABLE record_slugs (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      type text NOT NULL,
      slug text NOT NULL,
      record_id uuid NOT NULL REFERENCES records(id) ON DELETE CASCADE,
      used_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (station_id, type, slug)
    );
    CREATE INDEX record_slugs_record_idx ON record_slugs (record_id);

    CREATE TABLE media_assets (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      kind text NOT NULL,
      focal_x double precision NOT NULL DEFAULT 0.5 CHECK (focal_x BETWEEN 0 AND 1),
      focal_y double precision NOT NULL DEFAULT 0.5 CHECK (focal_y BETWEEN 0 AND 1),
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE media_versions (
      id uuid PRIMARY KEY,
      asset_id uuid NOT NULL REFERENCES media_assets(id) ON DELETE CASCADE,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      kind text NOT NULL,
      mime text NOT NULL,
      alt text NOT NULL DEFAULT '',
      credits text NOT NULL DEFAULT '',
      width integer,
      height integer,
      duration double precision,
      size bigint NOT NULL,
      sha256 text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX media_versions_asset_idx ON media_versions (asset_id);

    -- Bytes of originals and renditions; variant 'original' holds the upload.
    CREATE TABLE media_files (
      version_id uuid NOT NULL REFERENCES media_versions(id) ON DELETE CASCADE,
      variant text NOT NULL CHECK (variant IN ('original', 'thumb', 'display', 'card', 'square')),
      mime text NOT NULL,
      width integer,
      height integer,
      size bigint NOT NULL,
      etag text NOT NULL,
      bytes bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (version_id, variant)
    );

    -- Which media versions currently published records reference: a version is public exactly while it has a row here.
    CREATE TABLE published_media (
      version_id uuid NOT NULL REFERENCES media_versions(id) ON DELETE CASCADE,
      record_id uuid NOT NULL REFERENCES records(id) ON DELETE CASCADE,
      station_id text NOT NULL,
      PRIMARY KEY (version_id, record_id)
    );
    CREATE INDEX published_media_record_idx ON published_media (record_id);

    CREATE TABLE presenters (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      title text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX presenters_station_idx ON presenters (station_id);

    CREATE TABLE programs (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      title text NOT NULL,
      description text,
      profile_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX programs_station_idx ON programs (station_id);

    CREATE TABLE program_presenters (
      program_id uuid NOT NULL REFERENCES programs(id) ON DELETE CASCADE,
      presenter_id uuid NOT NULL REFERENCES presenters(id) ON DELETE CASCADE,
      position integer NOT NULL,
      PRIMARY KEY (program_id, presenter_id)
    );

    CREATE TABLE program_slots (
      program_id uuid NOT NULL REFERENCES programs(id) ON DELETE CASCADE,
      position integer NOT NULL,
      weekday smallint NOT NULL CHECK (weekday BETWEEN 1 AND 7),
      start_time text NOT NULL CHECK (start_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
      duration_minutes integer NOT NULL CHECK (duration_minutes > 0),
      PRIMARY KEY (program_id, position)
    );

    CREATE TABLE broadcasts (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      program_id uuid NOT NULL REFERENCES programs(id),
      title text,
      starts_at timestamptz NOT NULL,
      ends_at timestamptz NOT NULL,
      nature text NOT NULL CHECK (nature IN ('live', 'prerecorded', 'repeat')),
      published boolean NOT NULL DEFAULT true,
      cancelled boolean NOT NULL DEFAULT false,
      cancellation_reason text NOT NULL DEFAULT '',
      repeat_of_id uuid REFERENCES broadcasts(id) ON DELETE SET NULL,
      presenter_ids uuid[],
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (ends_at > starts_at)
    );
    CREATE INDEX broadcasts_window_idx ON broadcasts (station_id, starts_at, ends_at);
    CREATE INDEX broadcasts_program_idx ON broadcasts (program_id);

    CREATE TABLE rundown_items (
      id uuid PRIMARY KEY,
      broadcast_id uuid NOT NULL REFERENCES broadcasts(id) ON DELETE CASCADE,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      position integer NOT NULL,
      kind text NOT NULL CHECK (kind IN ('track', 'talk', 'ad', 'jingle')),
      artist text,
      title text NOT NULL,
      duration_seconds double precision,
      planned_starts_at timestamptz NOT NULL,
      planned_ends_at timestamptz,
      UNIQUE (broadcast_id, position)
    );

    -- Now-playing observations as reported by encoders. eventId is unique per station.
    CREATE TABLE observations (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      event_id text,
      fingerprint text NOT NULL,
      artist text,
      title text,
      album text,
      duration_seconds double precision,
      artwork_url text,
      source_track_id text,
      is_playing boolean NOT NULL,
      observed_at timestamptz,
      received_at timestamptz NOT NULL,
      sort_at timestamptz NOT NULL,
      outcome text NOT NULL,
      accepted boolean NOT NULL,
      broadcast_id uuid REFERENCES broadcasts(id) ON DELETE SET NULL,
      rundown_item_id uuid REFERENCES rundown_items(id) ON DELETE SET NULL,
      score double precision,
      UNIQUE (station_id, event_id)
    );
    CREATE INDEX observations_latest_idx ON observations (station_id, sort_at DESC, received_at DESC);
    CREATE INDEX observations_received_idx ON observations (station_id, received_at DESC);
    CREATE INDEX observations_history_idx ON observations (station_id, sort_at DESC, received_at DESC, id DESC) WHERE is_playing;

    -- Current rows of the public realtime feed, with a per-station sequence so gateways can catch up.
    CREATE TABLE feed_rows (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('schedule', 'on-air', 'now-playing', 'content')),
      entry text NOT NULL,
      data jsonb,
      deleted boolean NOT NULL DEFAULT false,
      seq bigint NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (station_id, kind, entry)
    );
    CREATE INDEX feed_rows_seq_idx ON feed_rows (station_id, seq);

    CREATE TABLE push_devices (
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      token_hash text NOT NULL,
      token text NOT NULL,
      platform text NOT NULL CHECK (platform IN ('ios', 'android')),
      provider text NOT NULL CHECK (provider IN ('fcm', 'apns', 'expo')),
      topic_alerts boolean NOT NULL DEFAULT true,
      topic_content boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (station_id, token_hash)
    );

    CREATE TABLE weather_snapshots (
      station_id text PRIMARY KEY REFERENCES stations(id) ON DELETE CASCADE,
      observed_at timestamptz NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      snapshots jsonb NOT NULL
    );

    CREATE TABLE traffic_snapshots (
      station_id text PRIMARY KEY REFERENCES stations(id) ON DELETE CASCADE,
      observed_at timestamptz NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      snapshot jsonb NOT NULL
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS traffic_snapshots, weather_snapshots, push_devices, feed_rows, observations,
      rundown_items, broadcasts, program_slots, program_presenters, programs, presenters, published_media,
      media_files, media_versions, media_assets, record_slugs, published_records, record_revisions, records,
      content_type_versions, content_types, credentials, stations CASCADE;
  `);
}
