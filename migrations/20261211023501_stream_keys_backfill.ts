import type { Knex } from 'knex';

// Data backfill: every stored `profile.streamUrls[]` entry without a `key` gets `stream-{n}` by its
// 1-based position, and `latencySeconds` 0 when it has none (docs/now-playing.md#heard-time-answers-in-the-listeners-time). Stored, so
// a key never moves when entries are added later, and the gateway reads the same keys as web.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE stations s
       SET profile = jsonb_set(s.profile, '{streamUrls}', filled.entries)
      FROM (
        SELECT st.id,
               jsonb_agg(
                 jsonb_build_object('key', 'stream-' || t.n, 'latencySeconds', 0) || t.entry
                 ORDER BY t.n
               ) AS entries
          FROM stations st,
               jsonb_array_elements(st.profile->'streamUrls') WITH ORDINALITY AS t(entry, n)
         WHERE jsonb_typeof(st.profile->'streamUrls') = 'array'
         GROUP BY st.id
      ) filled
     WHERE s.id = filled.id
       AND EXISTS (
         SELECT 1 FROM jsonb_array_elements(s.profile->'streamUrls') e
          WHERE e->'key' IS NULL OR e->'latencySeconds' IS NULL
       )
  `);
}

// The keys stay: they may already be in listeners' URLs.
export async function down(): Promise<void> {}
