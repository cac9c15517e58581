import { inTransaction, type Db } from '../../lib/db.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { keysetPage } from '../../lib/keysetCursor.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { catchUpCatalogue, verdicts, type Verdict } from './catalogue.ts';
import type { BanRow, MessageKind, MessageRow, MessageStatus, StudioStatus } from './model.ts';
import { announce, NEXT_POSITION_CTE } from './positions.ts';
import { presentMessage } from './presenter.ts';

// The studio's side of the inbox (docs/inbox.md, "The studio API"): the list, a message's status, bans.

type StudioServices = Pick<Services, 'db' | 'clock' | 'invalidation'>;

/** One newest-first page of a station's messages; a cursor holds its list and filters (another is a 400). */
export async function messagePage(
  db: Db,
  secret: string,
  stationId: string,
  query: { status?: MessageStatus; kind?: MessageKind; limit?: number; cursor?: string },
) {
  const rows = db<MessageRow>('inbox_messages').select('*').where({ station_id: stationId });
  if (query.status) rows.where({ status: query.status });
  if (query.kind) rows.where({ kind: query.kind });
  const bind = { s: stationId, st: query.status ?? '', k: query.kind ?? '' };
  const { page, nextCursor } = await keysetPage<MessageRow>(rows, secret, bind, 'this inbox list with the same filters', {
    limit: query.limit ?? 50,
    cursor: query.cursor,
  });
  return { messages: page.map(presentMessage), nextCursor };
}

/** Sets a message's status; the same status again changes nothing (no stream event). 404 for an unknown one. */
export async function setStatus(svc: StudioServices, stationId: string, messageId: string, status: StudioStatus) {
  const row = await inTransaction(svc.db, async (tx) => {
    const found = await tx.trx<MessageRow>('inbox_messages').where({ station_id: stationId, id: messageId }).forUpdate().first();
    if (!found) throw new NotFoundError('Message not found.');
    if (found.status === status) return found;
    const { rows } = await tx.trx.raw<{ rows: MessageRow[] }>(
      `WITH ${NEXT_POSITION_CTE}
       UPDATE inbox_messages SET status = ?, updated_at = ?, seq = next_position.seq FROM next_position
        WHERE inbox_messages.station_id = ? AND inbox_messages.id = ?
       RETURNING inbox_messages.*`,
      [stationId, status, svc.clock.now(), stationId, messageId],
    );
    tx.afterCommit(() => announce(svc, stationId));
    return rows[0];
  });
  return presentMessage(row);
}

export const presentBan = (row: BanRow) => ({
  id: row.id,
  client: row.client,
  expiresAt: row.expires_at ? row.expires_at.toISOString() : null,
  createdAt: row.created_at.toISOString(),
});

/** Bans the client and the address a message came from (404 for an unknown message). */
export async function createBan(svc: StudioServices, stationId: string, messageId: string, days: number | undefined) {
  const now = svc.clock.now();
  const row = await inTransaction(svc.db, async ({ trx }) => {
    const message = await trx<MessageRow>('inbox_messages').where({ station_id: stationId, id: messageId }).first();
    if (!message) throw new NotFoundError('Message not found.');
    const [ban] = await trx<BanRow>('inbox_bans')
      .insert({
        id: newId(),
        station_id: stationId,
        client_hash: message.client_hash,
        client: message.client,
        address_hash: message.address_hash,
        expires_at: days === undefined ? null : new Date(now.getTime() + days * 86_400_000),
        created_at: now,
      })
      .returning('*');
    return ban;
  });
  return presentBan(row);
}

/** The bans in force, newest first. */
export async function listBans(db: Db, stationId: string, now: Date) {
  const rows: BanRow[] = await db<BanRow>('inbox_bans')
    .where({ station_id: stationId })
    .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
  return { bans: rows.map(presentBan) };
}

/** Lifts a ban; false when the station has no such ban. */
export async function deleteBan(db: Db, stationId: string, banId: string): Promise<boolean> {
  return (await db('inbox_bans').where({ station_id: stationId, id: banId }).delete()) > 0;
}

/**
 * Whether the request policy would take a stored request now (the studio's check before playing it): the
 * verdict a new request for its track would get, not counting the request itself. 404 for an unknown
 * message or one that is not a request.
 */
export async function requestVerdict(
  svc: Pick<Services, 'db' | 'clock'>,
  station: Pick<Station, 'id' | 'inbox'>,
  messageId: string,
): Promise<Verdict> {
  const row = await svc
    .db<MessageRow>('inbox_messages')
    .where({ station_id: station.id, id: messageId, kind: 'request' })
    .first('id', 'artist_key', 'title_key');
  if (!row || row.title_key === null) throw new NotFoundError('Request not found.');
  const now = svc.clock.now();
  await catchUpCatalogue(svc.db, station.id, now);
  const [verdict] = await verdicts(
    svc.db,
    station.id,
    station.inbox,
    [{ artistKey: row.artist_key ?? '', titleKey: row.title_key }],
    now,
    row.id,
  );
  return verdict;
}
