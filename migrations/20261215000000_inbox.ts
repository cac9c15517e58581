import type { Knex } from 'knex';

// The listener inbox (docs/inbox.md). A listener's clientId and address are never stored: only their
// HMACs (WAVELINE_SECRET) and the client's pseudonym, derived from its HMAC.
// - inbox_messages: messages, dedications and song requests; `seq` is the station's stream position of
//   the message's last change (the studio stream resumes from it); a request keeps its track's match keys.
// - inbox_positions: each station's last stream position, taken with a row lock in the writing
//   transaction, so positions become visible in the order they were given.
// - inbox_plays: the request catalogue — each play of the station with its track's match and search keys,
//   caught up from the observations (inbox_catalogue_marks: the last receipt read).
// - inbox_bans: banned clients and addresses (by their HMACs).
// - inbox_votes: a client's vote on a play; inbox_vote_counts: a play's likes and dislikes in a few
//   shards, so a burst of votes on one play does not queue on one row.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE inbox_messages (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('message', 'dedication', 'request')),
      text text,
      name text,
      location text,
      track_artist text,
      track_title text,
      artist_key text,
      title_key text,
      status text NOT NULL CHECK (status IN ('pending', 'held', 'shown', 'answered', 'hidden')),
      client_hash text NOT NULL,
      client text NOT NULL,
      address_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      seq bigint NOT NULL
    );
    CREATE INDEX inbox_messages_list_idx ON inbox_messages (station_id, created_at DESC, id DESC);
    CREATE INDEX inbox_messages_status_idx ON inbox_messages (station_id, status, created_at DESC, id DESC);
    CREATE INDEX inbox_messages_client_idx ON inbox_messages (station_id, client_hash, created_at);
    CREATE INDEX inbox_messages_address_idx ON inbox_messages (station_id, address_hash, created_at);
    CREATE INDEX inbox_messages_pseudonym_idx ON inbox_messages (station_id, client);
    CREATE UNIQUE INDEX inbox_messages_seq_idx ON inbox_messages (station_id, seq);
    CREATE INDEX inbox_messages_requests_idx ON inbox_messages (station_id, artist_key, title_key, created_at)
      WHERE kind = 'request' AND status IN ('pending', 'shown');
    CREATE INDEX inbox_messages_age_idx ON inbox_messages (created_at);

    CREATE TABLE inbox_positions (
      station_id text PRIMARY KEY REFERENCES stations(id) ON DELETE CASCADE,
      seq bigint NOT NULL
    );

    CREATE TABLE inbox_catalogue_marks (
      station_id text PRIMARY KEY REFERENCES stations(id) ON DELETE CASCADE,
      receipt_seq bigint NOT NULL
    );

    CREATE TABLE inbox_plays (
      observation_id uuid PRIMARY KEY REFERENCES observations(id) ON DELETE CASCADE,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      artist_key text NOT NULL,
      title_key text NOT NULL,
      artist_search text NOT NULL,
      title_search text NOT NULL,
      played_at timestamptz NOT NULL
    );
    CREATE INDEX inbox_plays_track_idx ON inbox_plays (station_id, artist_key, title_key, played_at DESC);
    CREATE INDEX inbox_plays_time_idx ON inbox_plays (station_id, played_at DESC);

    CREATE TABLE inbox_bans (
      id uuid PRIMARY KEY,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      client_hash text NOT NULL,
      client text NOT NULL,
      address_hash text NOT NULL,
      expires_at timestamptz,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX inbox_bans_client_idx ON inbox_bans (station_id, client_hash);
    CREATE INDEX inbox_bans_address_idx ON inbox_bans (station_id, address_hash);

    CREATE TABLE inbox_votes (
      observation_id uuid NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
      client_hash text NOT NULL,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      client text NOT NULL,
      value smallint NOT NULL CHECK (value IN (1, -1)),
      voted_at timestamptz NOT NULL,
      PRIMARY KEY (observation_id, client_hash)
    );
    CREATE INDEX inbox_votes_client_idx ON inbox_votes (station_id, client);
    CREATE INDEX inbox_votes_age_idx ON inbox_votes (voted_at);

    CREATE TABLE inbox_vote_counts (
      observation_id uuid NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
      shard smallint NOT NULL,
      station_id text NOT NULL REFERENCES stations(id) ON DELETE CASCADE,
      likes integer NOT NULL DEFAULT 0,
      dislikes integer NOT NULL DEFAULT 0,
      PRIMARY KEY (observation_id, shard)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `DROP TABLE IF EXISTS inbox_vote_counts, inbox_votes, inbox_bans, inbox_plays, inbox_catalogue_marks, inbox_positions, inbox_messages`,
  );
}
