import type { Knex } from 'knex';

// Media bytes on a store of the deployment's choosing (docs/media.md, "Stores"):
// - media_files.store / object_key name where a file's bytes live (`postgres`, `filesystem` or `s3`,
//   under that key); a row without them keeps its bytes in media_files.bytes, as every file stored
//   before this migration does, and is read from there as before.
// - media_chunks: the postgres store's objects, 1 MiB per row, kept uncompressed (media is compressed
//   already; a range then reads only its chunks' TOAST pages).

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE media_files ALTER COLUMN bytes DROP NOT NULL;
    ALTER TABLE media_files ADD COLUMN store text, ADD COLUMN object_key text;
    ALTER TABLE media_files ADD CONSTRAINT media_files_bytes_place CHECK (
      (store IS NULL AND object_key IS NULL AND bytes IS NOT NULL)
      OR (store IN ('postgres', 'filesystem', 's3') AND object_key IS NOT NULL AND bytes IS NULL)
    );
    CREATE TABLE media_chunks (
      object_key text NOT NULL,
      seq integer NOT NULL,
      bytes bytea NOT NULL,
      PRIMARY KEY (object_key, seq)
    );
    ALTER TABLE media_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS media_chunks;
    DELETE FROM media_files WHERE bytes IS NULL;
    ALTER TABLE media_files DROP CONSTRAINT IF EXISTS media_files_bytes_place;
    ALTER TABLE media_files DROP COLUMN IF EXISTS object_key, DROP COLUMN IF EXISTS store;
    ALTER TABLE media_files ALTER COLUMN bytes SET NOT NULL;
  `);
}
