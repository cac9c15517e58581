import type { Tx } from '../../lib/db.ts';
import { newId } from '../../lib/ids.ts';
import { NotFoundError, ValidationError, type Issue } from '../../lib/errors.ts';
import { plannedEnds, type BroadcastRow, type RundownItemRow } from './model.ts';
import { rundownOf } from './queries.ts';
import type { RundownBody } from './schemas.ts';

/**
 * Planned start of each item: its own `plannedStartsAt`, else back-to-back after the previous item
 * (the first one at the broadcast start). After an item without `durationSeconds` its end is unknown:
 * the items up to the next one that names its start (or the broadcast end) then share that span in
 * equal parts, in their order — a rundown of titles alone is spread evenly over the broadcast.
 */
function plannedStarts(items: RundownBody['items'], broadcastStart: Date, broadcastEnd: Date): Date[] {
  const starts: Date[] = [];
  items.forEach((item, i) => {
    if (item.plannedStartsAt !== undefined) starts.push(new Date(item.plannedStartsAt));
    else if (i === 0) starts.push(broadcastStart);
    else {
      const previousStart = starts[i - 1].getTime();
      const duration = items[i - 1].durationSeconds;
      if (duration !== undefined && duration !== null) starts.push(new Date(previousStart + duration * 1000));
      else {
        const next = items.findIndex((later, j) => j > i && later.plannedStartsAt !== undefined);
        const until = next < 0 ? broadcastEnd.getTime() : new Date(items[next].plannedStartsAt as string).getTime();
        const sharing = (next < 0 ? items.length : next) - (i - 1); // the previous item and those up to the anchor
        starts.push(new Date(previousStart + Math.max(0, until - previousStart) / sharing));
      }
    }
  });
  return starts;
}

/** 400 for an item id given twice, or already used by another broadcast's rundown. */
async function checkItemIds(tx: Tx, broadcastId: string, ids: Array<string | undefined>): Promise<void> {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (id === undefined) return;
    if (seen.has(id.toLowerCase()))
      issues.push({ path: `items.${i}.id`, code: 'duplicate', message: `items.${i}.id appears more than once` });
    seen.add(id.toLowerCase());
  });
  const given = ids.filter((id): id is string => id !== undefined);
  if (given.length) {
    const taken = new Set(
      (await tx.trx('rundown_items').whereIn('id', given).whereNot('broadcast_id', broadcastId).select<Array<{ id: string }>>('id')).map(
        (r) => r.id,
      ),
    );
    ids.forEach((id, i) => {
      if (id !== undefined && taken.has(id.toLowerCase()))
        issues.push({ path: `items.${i}.id`, code: 'taken', message: `items.${i}.id belongs to another broadcast's rundown` });
    });
  }
  if (issues.length) throw new ValidationError('Invalid rundown.', issues);
}

/**
 * The id each item is stored under: its own, else (so that sending the same rundown again changes
 * nothing, as a PUT named by the broadcast id must) the id of the current item at the same index when
 * that item has the same kind, artist and title and no item of the body names it; else a new one.
 */
function itemIds(items: RundownBody['items'], current: RundownItemRow[]): string[] {
  const named = new Set(items.flatMap((item) => (item.id ? [item.id.toLowerCase()] : [])));
  return items.map((item, position) => {
    if (item.id) return item.id.toLowerCase();
    const same = current.find((row) => row.position === position);
    const matches =
      same && !named.has(same.id) && same.kind === item.kind && same.artist === (item.artist ?? null) && same.title === item.title;
    return matches ? same.id : newId();
  });
}

/**
 * Replaces a broadcast's rundown. Items that keep their id are updated in place, so observations
 * already followed against them stay linked; items left out are deleted.
 */
export async function saveRundown(
  tx: Tx,
  stationId: string,
  broadcastId: string,
  body: RundownBody,
): Promise<{ items: RundownItemRow[]; ends: Date[]; broadcast: BroadcastRow }> {
  const broadcast = await tx.trx<BroadcastRow>('broadcasts').where({ id: broadcastId, station_id: stationId }).forUpdate().first();
  if (!broadcast) throw new NotFoundError('Broadcast not found.');
  await checkItemIds(
    tx,
    broadcastId,
    body.items.map((item) => item.id),
  );
  const starts = plannedStarts(body.items, broadcast.starts_at, broadcast.ends_at);
  const ids = itemIds(body.items, await rundownOf(tx.trx, broadcastId));
  const rows: RundownItemRow[] = body.items.map((item, position) => ({
    id: ids[position],
    broadcast_id: broadcastId,
    station_id: stationId,
    position,
    kind: item.kind,
    artist: item.artist ?? null,
    title: item.title,
    duration_seconds: item.durationSeconds ?? null,
    planned_starts_at: starts[position],
    planned_ends_at:
      item.durationSeconds === undefined || item.durationSeconds === null
        ? null
        : new Date(starts[position].getTime() + item.durationSeconds * 1000),
  }));
  // Move the old positions out of the way of the unique (broadcast, position) key before the upsert.
  await tx
    .trx('rundown_items')
    .where({ broadcast_id: broadcastId })
    .update({ position: tx.trx.raw('-1 - position') });
  await tx
    .trx('rundown_items')
    .where({ broadcast_id: broadcastId })
    .whereNotIn(
      'id',
      rows.map((r) => r.id),
    )
    .delete();
  if (rows.length) {
    await tx
      .trx('rundown_items')
      .insert(rows)
      .onConflict('id')
      .merge(['position', 'kind', 'artist', 'title', 'duration_seconds', 'planned_starts_at', 'planned_ends_at']);
  }
  const items = await rundownOf(tx.trx, broadcastId);
  return { items, ends: plannedEnds(items, broadcast.ends_at), broadcast };
}
