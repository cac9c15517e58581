import type { Knex } from 'knex';
import type { Db } from '../../lib/db.ts';

// Plays in a range: a station's stored observations with a track, in play order (sort_at, then
// receipt_seq), read in keyset batches on the (station, sort_at, receipt_seq) index — a month of plays
// never sits in memory whole, and no pooled connection is held between batches (a server-side cursor would
// pin one while a slow client downloads). The one query of the play log (playLog.ts), and of the audience
// feature's performances and report, each choosing its columns.

/** `[from, to)`; without `to`, every play from `from` on. */
export interface PlaysRange {
  from: Date;
  to?: Date;
}

/** A play as another feature's figures take it: its start and end (null while it has no known end). */
export interface PlayInterval {
  id: string;
  start: Date;
  end: Date | null;
}

/** The keyset columns every batch row has. */
export interface PlayKey {
  sort_at: Date;
  receipt_seq: string;
}

const BATCH = 2000;

/** The station's plays in the range, as `observations as o` (to join, filter, count or select from). */
export function playsQuery(db: Db, stationId: string, range: PlaysRange): Knex.QueryBuilder {
  const query = db('observations as o').where('o.station_id', stationId).andWhere('o.sort_at', '>=', range.from);
  if (range.to) query.andWhere('o.sort_at', '<', range.to);
  return query.whereNotNull('o.title');
}

/**
 * The plays of the range in play order, `batch` rows at a time. `select` adds what the caller needs to
 * `playsQuery`'s builder (joins, columns, a further filter); `o.sort_at` and `o.receipt_seq` are always there.
 */
export async function* playBatches<Row extends PlayKey>(
  db: Db,
  stationId: string,
  range: PlaysRange,
  select: (query: Knex.QueryBuilder) => Knex.QueryBuilder,
  batch = BATCH,
): AsyncGenerator<Row[]> {
  let after: PlayKey | null = null;
  for (;;) {
    const query = select(playsQuery(db, stationId, range))
      .select('o.sort_at', 'o.receipt_seq')
      .orderBy([{ column: 'o.sort_at' }, { column: 'o.receipt_seq' }])
      .limit(batch);
    if (after) query.andWhereRaw('(o.sort_at, o.receipt_seq) > (?::timestamptz, ?::bigint)', [after.sort_at, after.receipt_seq]);
    const rows: Row[] = await query;
    if (rows.length) yield rows;
    if (rows.length < batch) return;
    const last = rows[rows.length - 1];
    after = { sort_at: last.sort_at, receipt_seq: String(last.receipt_seq) };
  }
}

/**
 * The column `next_at`: the play time of the station's next observation in play order (of any kind: one
 * without a track ends the play too), on the same index; it may lie beyond the range or the batch.
 */
export function nextAtColumn(db: Db): Knex.Raw {
  return db.raw(
    `(SELECT n.sort_at FROM observations n WHERE n.station_id = o.station_id
        AND (n.sort_at, n.receipt_seq) > (o.sort_at, o.receipt_seq)
      ORDER BY n.sort_at, n.receipt_seq LIMIT 1) AS next_at`,
  );
}

/** The next observation's play time or playedAt + durationSeconds, whichever is earlier; null when neither is known. */
export function endOfPlay(playedAt: Date, durationSeconds: number | null, nextAt: Date | null): Date | null {
  const byDuration = durationSeconds !== null ? new Date(playedAt.getTime() + Math.round(durationSeconds * 1000)) : null;
  if (byDuration && nextAt) return byDuration.getTime() <= nextAt.getTime() ? byDuration : nextAt;
  return byDuration ?? nextAt;
}
