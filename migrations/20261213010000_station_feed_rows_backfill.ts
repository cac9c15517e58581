import type { Knex } from 'knex';

// Data backfill (docs/realtime.md#what-arrives): every station's feed holds a `schedule` row
// (`broadcasts: []`), an `on-air` row (null) and a `now-playing` row (track null, freshness `empty`)
// from its creation. New stations get them when they are created (src/domains/schedule/stationRows.ts,
// src/domains/nowPlaying/stationRows.ts); this gives the missing ones to every station created before,
// with the station's next feed seqs (so a cursor taken before sees them as changes, not a reset), in
// the presenters' shapes (presentSchedule with no broadcasts, buildOnAir's null, presentNowPlaying
// without an observation). A station that has broadcasts always has its schedule and on-air rows (every
// schedule write rebuilds them); should one lack them, the hourly `schedule.sweep` rebuilds them from
// its broadcasts. A station with observations always has its now-playing row (ingest writes it), so
// only stations without any get the empty one here.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    WITH missing AS (
      SELECT s.id AS station_id, k.kind, k.ord,
             CASE k.kind
               WHEN 'schedule' THEN jsonb_build_object(
                 'contractVersion', 1, 'timezone', s.timezone, 'broadcasts', '[]'::jsonb, 'truncated', false)
               WHEN 'on-air' THEN 'null'::jsonb
               ELSE jsonb_build_object(
                 'contractVersion', 1, 'stationId', s.id, 'timezone', s.timezone, 'track', NULL,
                 'elapsedSeconds', NULL, 'endsAt', NULL,
                 'freshness', jsonb_build_object('status', 'empty', 'thresholdSeconds', NULL, 'ageSeconds', NULL,
                                                 'observedAt', NULL, 'receivedAt', NULL))
             END AS data
        FROM stations s
       CROSS JOIN (VALUES ('schedule', 1), ('on-air', 2), ('now-playing', 3)) AS k(kind, ord)
       WHERE NOT EXISTS (
               SELECT 1 FROM feed_rows r
                WHERE r.station_id = s.id AND r.kind = k.kind AND r.entry = 'current' AND NOT r.deleted)
         AND (k.kind <> 'now-playing' OR NOT EXISTS (SELECT 1 FROM observations o WHERE o.station_id = s.id))
    ),
    numbered AS (
      SELECT missing.*,
             row_number() OVER (PARTITION BY station_id ORDER BY ord) AS n,
             count(*) OVER (PARTITION BY station_id) AS total
        FROM missing
    ),
    bumped AS (
      UPDATE stations s
         SET feed_seq = s.feed_seq + t.total
        FROM (SELECT DISTINCT station_id, total FROM numbered) t
       WHERE s.id = t.station_id
      RETURNING s.id, s.feed_seq - t.total AS base
    )
    INSERT INTO feed_rows (station_id, kind, entry, data, deleted, seq, created_at, updated_at)
    SELECT numbered.station_id, numbered.kind, 'current', numbered.data, false, bumped.base + numbered.n, now(), now()
      FROM numbered JOIN bumped ON bumped.id = numbered.station_id
    ON CONFLICT (station_id, kind, entry) DO UPDATE
      SET data = excluded.data, deleted = false, seq = excluded.seq, updated_at = excluded.updated_at
  `);
}

// The rows stay: connections and cursors may already hold them.
export async function down(): Promise<void> {}
