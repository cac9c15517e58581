import type { Knex } from 'knex';
import { inTransaction, type Db } from '../../lib/db.ts';
import { ModuleDisabledError, NothingPlayingError } from '../../lib/errors.ts';
import { freshness } from '../../lib/freshness.ts';
import type { Services } from '../../services.ts';
import { latestTrack } from '../nowPlaying/queries.ts';
import type { Station } from '../stations/model.ts';
import { clientIdentity } from './identity.ts';

// Likes (docs/inbox.md, "Likes"): one vote per client per play, on the play on air now — the latest
// observation, playing, with a title, and fresh as the now-playing answer counts it. The last vote
// counts; 0 withdraws it. A play's counts are kept in a few shards (a client's shard is fixed by its
// HMAC), so a burst of votes on one play queues on sixteen rows, not one; the counts are their sums.

export const VOTE_SHARDS = 16;

export const shardOf = (clientHash: string): number => parseInt(clientHash.slice(0, 2), 16) % VOTE_SHARDS;

/** The lock a client's votes (and their erasure) are decided under. */
export const voteLock = (stationId: string, clientHash: string): string => `inbox:votes:${stationId}:${clientHash}`;

export interface VoteResult {
  playId: string;
  value: number;
  likes: number;
  dislikes: number;
}

type VoteServices = Pick<Services, 'db' | 'config' | 'clock'>;

/** The client's vote on the play on air: stored, replaced or withdrawn; answers the play's counts after it. */
export async function vote(svc: VoteServices, station: Station, clientId: string, value: 1 | -1 | 0): Promise<VoteResult> {
  if (!station.inbox.likes) throw new ModuleDisabledError('inbox likes');
  const now = svc.clock.now();
  const play = await latestTrack(svc.db, station.id);
  if (
    !play ||
    !play.is_playing ||
    play.title === null ||
    freshness(play.observed_at, play.received_at, station.nowPlayingFreshnessSeconds, now).status !== 'fresh'
  )
    throw new NothingPlayingError();
  const { clientHash, client } = clientIdentity(svc.config.secret, station.id, clientId);
  const shard = shardOf(clientHash);
  const counts = await inTransaction(svc.db, async ({ trx }) => {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [voteLock(station.id, clientHash)]);
    // The previous vote (read under the client's lock), the vote written or withdrawn, and the difference
    // added to the client's shard; the other shards are read as they are.
    const { rows } = await trx.raw<{ rows: Array<{ likes: string; dislikes: string }> }>(
      `WITH previous AS (
         SELECT value FROM inbox_votes WHERE observation_id = :play AND client_hash = :hash
       ), withdrawn AS (
         DELETE FROM inbox_votes WHERE observation_id = :play AND client_hash = :hash AND :value::int = 0
       ), cast_vote AS (
         INSERT INTO inbox_votes (observation_id, client_hash, station_id, client, value, voted_at)
         SELECT :play, :hash, :station, :client, :value::smallint, :now WHERE :value::int <> 0
         ON CONFLICT (observation_id, client_hash) DO UPDATE SET value = EXCLUDED.value, voted_at = EXCLUDED.voted_at
       ), counted AS (
         INSERT INTO inbox_vote_counts (observation_id, shard, station_id, likes, dislikes)
         SELECT :play, :shard, :station,
                (CASE WHEN :value::int = 1 THEN 1 ELSE 0 END) - (SELECT count(*) FROM previous WHERE value = 1),
                (CASE WHEN :value::int = -1 THEN 1 ELSE 0 END) - (SELECT count(*) FROM previous WHERE value = -1)
         ON CONFLICT (observation_id, shard) DO UPDATE
           SET likes = inbox_vote_counts.likes + EXCLUDED.likes, dislikes = inbox_vote_counts.dislikes + EXCLUDED.dislikes
         RETURNING likes, dislikes
       )
       SELECT (SELECT likes FROM counted) + coalesce(sum(c.likes), 0) AS likes,
              (SELECT dislikes FROM counted) + coalesce(sum(c.dislikes), 0) AS dislikes
         FROM inbox_vote_counts c WHERE c.observation_id = :play AND c.shard <> :shard`,
      { play: play.id, hash: clientHash, value, station: station.id, client, now, shard },
    );
    return rows[0];
  });
  return { playId: play.id, value, likes: Number(counts.likes), dislikes: Number(counts.dislikes) };
}

/** The likes and dislikes of a batch of plays of a station (the play log's columns). */
export async function voteCounts(db: Db | Knex.Transaction, stationId: string, playIds: readonly string[]) {
  const rows: Array<{ observation_id: string; likes: string; dislikes: string }> = await db('inbox_vote_counts')
    .where({ station_id: stationId })
    .whereIn('observation_id', [...playIds])
    .groupBy('observation_id')
    .select('observation_id', db.raw('sum(likes) AS likes'), db.raw('sum(dislikes) AS dislikes'));
  return new Map(rows.map((row) => [row.observation_id, { likes: Number(row.likes), dislikes: Number(row.dislikes) }]));
}

/**
 * Deletes a client's votes (its HMAC) and takes them out of the plays' counts, in `trx` under the
 * client's vote lock. Answers how many were deleted.
 */
export async function eraseVotes(trx: Knex.Transaction, stationId: string, clientHash: string): Promise<number> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [voteLock(stationId, clientHash)]);
  const { rows } = await trx.raw<{ rows: Array<{ n: string }> }>(
    `WITH gone AS (
       DELETE FROM inbox_votes WHERE station_id = ? AND client_hash = ? RETURNING observation_id, value
     ), per_play AS (
       SELECT observation_id, count(*) FILTER (WHERE value = 1) AS likes, count(*) FILTER (WHERE value = -1) AS dislikes
         FROM gone GROUP BY observation_id
     ), adjusted AS (
       UPDATE inbox_vote_counts c SET likes = c.likes - p.likes, dislikes = c.dislikes - p.dislikes
         FROM per_play p WHERE c.observation_id = p.observation_id AND c.shard = ?
     )
     SELECT count(*) AS n FROM gone`,
    [stationId, clientHash, shardOf(clientHash)],
  );
  return Number(rows[0].n);
}
