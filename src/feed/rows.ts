import type { Knex } from 'knex';
import type { Db, Tx } from '../lib/db.ts';
import { numbered, type Statement } from '../lib/pipeline.ts';
import type { FeedBus, FeedMessage } from './bus.ts';
import { FEED_HISTORY_MS, type FeedKind } from './names.ts';

interface FeedRowRecord {
  station_id: string;
  kind: FeedKind;
  entry: string;
  data: unknown;
  deleted: boolean;
  seq: number;
  created_at: Date;
  updated_at: Date;
}

async function nextSeq(tx: Tx, stationId: string): Promise<number> {
  // Row lock on the station serialises feed writes of one station, so seq order is commit order.
  const [row] = await tx.trx('stations').where({ id: stationId }).increment('feed_seq', 1).returning<{ feed_seq: number }[]>('feed_seq');
  if (!row) throw new Error(`station ${stationId} does not exist`);
  return Number(row.feed_seq);
}

function publishAfterCommit(tx: Tx, bus: FeedBus, message: FeedMessage): void {
  tx.afterCommit(() => bus.publish(message));
}

/**
 * Two CTEs that take the station's next seq (`bump`) and upsert one feed row with it (`feed`, returning
 * `seq`): one round trip. The UPDATE takes the station's row lock, which serialises feed writes of one
 * station, so seq order is commit order. `when` is an SQL condition that must hold for anything to be
 * written (writers that put the CTEs in a statement of their own, e.g. nowPlaying/storeSql.ts).
 * Bindings: `feedRowBindings`.
 */
export const feedRowCtes = (when = 'true'): string => `
  bump AS (UPDATE stations SET feed_seq = feed_seq + 1 WHERE id = ? AND ${when} RETURNING feed_seq),
  feed AS (
    INSERT INTO feed_rows (station_id, kind, entry, data, deleted, seq, created_at, updated_at)
    SELECT ?, ?, ?, ?::jsonb, false, bump.feed_seq, ?, ? FROM bump
    ON CONFLICT (station_id, kind, entry) DO UPDATE
      SET data = excluded.data, deleted = false, seq = excluded.seq, updated_at = excluded.updated_at
    RETURNING seq
  )`;

/** One feed row as a writer describes it. */
export interface FeedRowInput {
  stationId: string;
  kind: FeedKind;
  entry: string;
  data: unknown;
}

export const feedRowBindings = (row: FeedRowInput, now: Date): unknown[] => [
  row.stationId,
  row.stationId,
  row.kind,
  row.entry,
  JSON.stringify(row.data ?? null),
  now,
  now,
];

// A named (prepared) statement: Postgres plans it once per connection.
const UPSERT_SQL = `WITH ${feedRowCtes()} SELECT seq FROM feed`;
const UPSERT_SQL_NUMBERED = numbered(UPSERT_SQL);

/** The upsert as a statement for a pipelined transaction (lib/pipeline.ts); it answers one row with `seq`. */
export function feedRowUpsertStatement(row: FeedRowInput, now: Date): Statement {
  return { name: 'feed_upsert_row_pipelined', text: UPSERT_SQL_NUMBERED, values: feedRowBindings(row, now) };
}

/** Creates or replaces the feed row (kind, entry) of a station; published on the bus after commit. */
export async function upsertFeedRow(
  tx: Tx,
  bus: FeedBus,
  row: { stationId: string; kind: FeedKind; entry: string; data: unknown; now?: Date },
): Promise<FeedMessage> {
  const now = row.now ?? new Date();
  const result = await tx.trx
    .raw<{ rows: Array<{ seq: string | number }> }>(UPSERT_SQL, feedRowBindings(row, now) as Knex.RawBinding[])
    .options({ name: 'feed_upsert_row' });
  if (result.rows.length === 0) throw new Error(`station ${row.stationId} does not exist`);
  const message = feedMessage(row, Number(result.rows[0].seq), now);
  publishAfterCommit(tx, bus, message);
  return message;
}

/** The bus message of a feed row written with `seq` (writers of pipelined transactions publish it themselves, after commit). */
export function feedMessage(row: FeedRowInput, seq: number, now: Date): FeedMessage {
  return {
    stationId: row.stationId,
    kind: row.kind,
    entry: row.entry,
    seq,
    deleted: false,
    data: row.data ?? null,
    updatedAt: now.toISOString(),
  };
}

/**
 * Removes a feed row. A tombstone (deleted, no data) is kept with the new seq so a gateway catching up
 * after a lost subscription still learns of the removal.
 */
export async function deleteFeedRow(
  tx: Tx,
  bus: FeedBus,
  row: { stationId: string; kind: FeedKind; entry: string; now?: Date },
): Promise<FeedMessage | null> {
  const existing = await tx.trx('feed_rows').where({ station_id: row.stationId, kind: row.kind, entry: row.entry, deleted: false }).first();
  if (!existing) return null;
  const seq = await nextSeq(tx, row.stationId);
  const now = row.now ?? new Date();
  await tx
    .trx('feed_rows')
    .where({ station_id: row.stationId, kind: row.kind, entry: row.entry })
    .update({ data: null, deleted: true, seq, updated_at: now });
  const message: FeedMessage = {
    stationId: row.stationId,
    kind: row.kind,
    entry: row.entry,
    seq,
    deleted: true,
    data: null,
    updatedAt: now.toISOString(),
  };
  publishAfterCommit(tx, bus, message);
  return message;
}

/** Rows of a station changed after `afterSeq` (tombstones included), in seq order. */
export async function feedRowsSince(db: Db, stationId: string, afterSeq: number): Promise<FeedMessage[]> {
  const rows = await db<FeedRowRecord>('feed_rows').where('station_id', stationId).andWhere('seq', '>', afterSeq).orderBy('seq');
  return rows.map((r) => ({
    stationId: r.station_id,
    kind: r.kind,
    entry: r.entry,
    seq: Number(r.seq),
    deleted: r.deleted,
    data: r.data,
    updatedAt: r.updated_at.toISOString(),
  }));
}

/**
 * Deletes tombstones older than the history window and raises each station's `feed_pruned_seq` to the
 * highest seq it pruned, in one statement: a cursor below that seq may have missed a delete that is gone,
 * so the gateway answers it with a reset. Returns the number of tombstones pruned.
 */
export async function pruneFeedHistory(db: Db, now: Date, historyMs = FEED_HISTORY_MS): Promise<number> {
  const result = await db.raw<{ rows: Array<{ pruned: string | number }> }>(
    `WITH gone AS (
       DELETE FROM feed_rows WHERE deleted AND updated_at < ? RETURNING station_id, seq
     ), floors AS (
       SELECT station_id, max(seq) AS seq, count(*) AS pruned FROM gone GROUP BY station_id
     ), raised AS (
       UPDATE stations s SET feed_pruned_seq = GREATEST(s.feed_pruned_seq, floors.seq)
         FROM floors WHERE s.id = floors.station_id RETURNING floors.pruned
     )
     SELECT COALESCE(sum(pruned), 0) AS pruned FROM raised`,
    [new Date(now.getTime() - historyMs)],
  );
  await pruneRowVersions(db, now);
  return Number(result.rows[0]?.pruned ?? 0);
}

/** How long versions of the now-playing and on-air rows are kept (delayed feed connections need ten minutes). */
export const ROW_VERSIONS_MS = 60 * 60 * 1000;

/**
 * Deletes versions of the now-playing and on-air rows (migrations/…_feed_row_versions.ts) older than
 * ROW_VERSIONS_MS, except the newest of each row: it is what was current when the kept ones begin.
 */
export async function pruneRowVersions(db: Db, now: Date): Promise<void> {
  await db.raw(
    `DELETE FROM feed_row_versions v
      WHERE v.updated_at < ?
        AND EXISTS (SELECT 1 FROM feed_row_versions n
                     WHERE n.station_id = v.station_id AND n.kind = v.kind AND n.entry = v.entry AND n.seq > v.seq AND n.updated_at < ?)`,
    [new Date(now.getTime() - ROW_VERSIONS_MS), new Date(now.getTime() - ROW_VERSIONS_MS)],
  );
}
