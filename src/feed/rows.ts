import type { Db, Tx } from '../lib/db.ts';
import type { FeedBus, FeedMessage } from './bus.ts';
import type { FeedKind } from './names.ts';

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
  const [row] = await tx
    .trx('stations')
    .where({ id: stationId })
    .increment('feed_seq', 1)
    .returning<{ feed_seq: number }[]>('feed_seq');
  if (!row) throw new Error(`station ${stationId} does not exist`);
  return Number(row.feed_seq);
}

function publishAfterCommit(tx: Tx, bus: FeedBus, message: FeedMessage): void {
  tx.afterCommit(() => bus.publish(message));
}

/** Creates or replaces the feed row (kind, entry) of a station; published on the bus after commit. */
export async function upsertFeedRow(
  tx: Tx,
  bus: FeedBus,
  row: { stationId: string; kind: FeedKind; entry: string; data: unknown; now?: Date },
): Promise<FeedMessage> {
  const seq = await nextSeq(tx, row.stationId);
  const now = row.now ?? new Date();
  await tx.trx
    .table<FeedRowRecord>('feed_rows')
    .insert({
      station_id: row.stationId,
      kind: row.kind,
      entry: row.entry,
      data: JSON.stringify(row.data ?? null) as unknown,
      deleted: false,
      seq,
      created_at: now,
      updated_at: now,
    })
    .onConflict(['station_id', 'kind', 'entry'])
    .merge(['data', 'deleted', 'seq', 'updated_at']);
  const message: FeedMessage = {
    stationId: row.stationId,
    kind: row.kind,
    entry: row.entry,
    seq,
    deleted: false,
    data: row.data ?? null,
    updatedAt: now.toISOString(),
  };
  publishAfterCommit(tx, bus, message);
  return message;
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
  await tx.trx('feed_rows')
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
