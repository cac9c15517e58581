import type { Knex } from 'knex';

// List positions of published records over time, so a cursor walk can be a snapshot.
//
// Each type has a position clock (content_types.position_seq). A change of a record's list position —
// publish, republish, re-presentation (updatedAt), unpublish — takes the next value while holding the
// type's row lock until commit, so for one type seq order is commit order: a reader that sees
// position_seq = S sees exactly the changes numbered <= S. The current position of a published record
// is valid from published_records.position_from; positions it held before are kept in
// record_position_history with [valid_from, valid_until).
//
// Lock order in every content write that moves a position: records row → content_types row →
// published_records / content_type_versions / stations (feed). saveContentType locks content_types then
// content_type_versions, which agrees.

/** The record's current position, as read from published_records before it changes. */
export interface CurrentPosition {
  record_id: string;
  station_id: string;
  type: string;
  published_at: Date;
  updated_at: Date;
  position_from: number;
}

/** Takes the next value of the type's position clock (and its row lock, held until commit). */
export async function nextPositionSeq(trx: Knex.Transaction, stationId: string, type: string): Promise<number> {
  const [row] = await trx('content_types')
    .where({ station_id: stationId, key: type })
    .increment('position_seq', 1)
    .returning<Array<{ position_seq: number }>>('position_seq');
  if (!row) throw new Error(`content type ${type} of station ${stationId} does not exist`);
  return Number(row.position_seq);
}

/** The published row's position, or null when the record is not published. Call with the record locked. */
export async function currentPosition(trx: Knex.Transaction, recordId: string): Promise<CurrentPosition | null> {
  const row = await trx('published_records')
    .select('record_id', 'station_id', 'type', 'published_at', 'updated_at', 'position_from')
    .where({ record_id: recordId })
    .first();
  return (row as CurrentPosition | undefined) ?? null;
}

/** Ends the current position at `seq` (the seq of the change that moves or removes it). */
export async function closePosition(trx: Knex.Transaction, position: CurrentPosition, seq: number): Promise<void> {
  await trx('record_position_history').insert({
    record_id: position.record_id,
    station_id: position.station_id,
    type: position.type,
    published_at: position.published_at,
    updated_at: position.updated_at,
    valid_from: Number(position.position_from),
    valid_until: seq,
  });
}
