import type { Db } from '../../lib/db.ts';
import { CATALOGUE_DAYS } from './model.ts';
import { DEFAULT_INBOX } from './setting.ts';

// Retention (docs/inbox.md, "Retention"), run daily by the worker's `inbox.prune`: messages and votes
// older than their station's `retentionDays` (a play's counts stay: they no longer name anyone), bans
// that ran out, and catalogue plays no rule looks back to.

/** Catalogue plays are kept as long as the longest retention, beyond the catalogue's own 90 days. */
const PLAYS_KEPT_DAYS = Math.max(CATALOGUE_DAYS, 366);

export async function pruneInbox(db: Db, now: Date): Promise<{ messages: number; votes: number; bans: number; plays: number }> {
  const retention = `make_interval(days => COALESCE((s.inbox->>'retentionDays')::int, ${DEFAULT_INBOX.retentionDays}))`;
  const messages = await db.raw<{ rowCount: number }>(
    `DELETE FROM inbox_messages m USING stations s WHERE m.station_id = s.id AND m.created_at < ?::timestamptz - ${retention}`,
    [now],
  );
  const votes = await db.raw<{ rowCount: number }>(
    `DELETE FROM inbox_votes v USING stations s WHERE v.station_id = s.id AND v.voted_at < ?::timestamptz - ${retention}`,
    [now],
  );
  const bans = await db('inbox_bans').where('expires_at', '<=', now).delete();
  const plays = await db('inbox_plays')
    .where('played_at', '<', new Date(now.getTime() - PLAYS_KEPT_DAYS * 86_400_000))
    .delete();
  return { messages: messages.rowCount ?? 0, votes: votes.rowCount ?? 0, bans, plays };
}
