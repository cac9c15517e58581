import type { Knex } from 'knex';
import type { Db } from '../../lib/db.ts';
import { ModuleDisabledError, NothingPlayingError } from '../../lib/errors.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { clientIdentity } from './identity.ts';

// Likes (docs/inbox.md, "Likes"): one vote per client per play, on the play on air now — the latest
// observation, playing, with a title, and fresh as the now-playing answer counts it. The last vote
// counts; 0 withdraws it. A play's counts are kept in a few shards (a client's shard is fixed by its
// HMAC), so a burst of votes on one play queues on sixteen rows, not one; the counts are their sums.

export const VOTE_SHARDS = 16;

export const shardOf = (clientHash: string): number => parseInt(clientHash.slice(0, 2), 16) % VOTE_SHARDS;

/** The lock two erasures of one client are decided under. */
export const voteLock = (stationId: string, clientHash: string): string => `inbox:votes:${stationId}:${clientHash}`;

export interface VoteResult {
  playId: string;
  value: number;
  likes: number;
  dislikes: number;
}

type VoteServices = Pick<Services, 'db' | 'config' | 'clock'>;

/**
 * A vote is this one autocommit statement (docs/inbox.md#how-it-works), one round trip:
 * - `play`: the play on air, read by the statement itself (the latest observation, as latestTrack
 *   orders them), so the vote lands on the play that was on air when Postgres ran it — before a song
 *   change commits the old play, after it the new one, never a play that is not on air;
 * - `withdrawn` (value 0) deletes the client's vote, `cast_vote` writes or replaces it; either returns
 *   the value it removed, read under the row's lock (a DELETE's RETURNING and `previous`, which the
 *   ON CONFLICT update sets from the row it locked): two votes of one client at once wait for each
 *   other's row, and the second sees the first's value, so no difference is lost or counted twice;
 * - `counted` adds the difference to the client's shard (an upsert, under that row's lock) and the other
 *   shards are added as they are.
 * Locks are taken in one order (the vote's row, then its shard's), as erasure does, so no deadlock.
 * No row: nothing is on air (409).
 */
const VOTE_SQL = `
  WITH play AS (
    SELECT id, is_playing, title, coalesce(observed_at, received_at) AS basis
      FROM observations WHERE station_id = :station
     ORDER BY sort_at DESC, receipt_seq DESC LIMIT 1
  ), on_air AS (
    SELECT id FROM play WHERE is_playing AND title IS NOT NULL AND basis > :freshAfter::timestamptz
  ), withdrawn AS (
    DELETE FROM inbox_votes v USING on_air
     WHERE :value::int = 0 AND v.observation_id = on_air.id AND v.client_hash = :hash
    RETURNING v.value AS previous
  ), cast_vote AS (
    INSERT INTO inbox_votes (observation_id, client_hash, station_id, client, value, voted_at, previous)
    SELECT id, :hash, :station, :client, :value::smallint, :now::timestamptz, NULL FROM on_air WHERE :value::int <> 0
    ON CONFLICT (observation_id, client_hash) DO UPDATE
      SET previous = inbox_votes.value, value = EXCLUDED.value, voted_at = EXCLUDED.voted_at
    RETURNING previous
  ), removed AS (
    SELECT coalesce((SELECT previous FROM withdrawn), (SELECT previous FROM cast_vote)) AS previous
  ), counted AS (
    INSERT INTO inbox_vote_counts (observation_id, shard, station_id, likes, dislikes)
    SELECT on_air.id, :shard::smallint, :station,
           (CASE WHEN :value::int = 1 THEN 1 ELSE 0 END) - (CASE WHEN removed.previous = 1 THEN 1 ELSE 0 END),
           (CASE WHEN :value::int = -1 THEN 1 ELSE 0 END) - (CASE WHEN removed.previous = -1 THEN 1 ELSE 0 END)
      FROM on_air, removed
    ON CONFLICT (observation_id, shard) DO UPDATE
      SET likes = inbox_vote_counts.likes + EXCLUDED.likes, dislikes = inbox_vote_counts.dislikes + EXCLUDED.dislikes
    RETURNING observation_id, likes, dislikes
  )
  SELECT counted.observation_id AS play_id,
         counted.likes + coalesce(sum(c.likes), 0) AS likes,
         counted.dislikes + coalesce(sum(c.dislikes), 0) AS dislikes
    FROM counted
    LEFT JOIN inbox_vote_counts c ON c.observation_id = counted.observation_id AND c.shard <> :shard::smallint
   GROUP BY counted.observation_id, counted.likes, counted.dislikes`;

/** The client's vote on the play on air: stored, replaced or withdrawn; answers the play's counts after it. */
export async function vote(svc: VoteServices, station: Station, clientId: string, value: 1 | -1 | 0): Promise<VoteResult> {
  if (!station.inbox.likes) throw new ModuleDisabledError('inbox likes');
  const now = svc.clock.now();
  const { clientHash, client } = clientIdentity(svc.config.secret, station.id, clientId);
  const shard = shardOf(clientHash);
  const { rows } = await svc.db
    .raw<{ rows: Array<{ play_id: string; likes: string; dislikes: string }> }>(VOTE_SQL, {
      station: station.id,
      freshAfter: freshAfter(station.nowPlayingFreshnessSeconds, now),
      hash: clientHash,
      client,
      value,
      now,
      shard,
    })
    .options({ name: 'inbox_vote' });
  if (rows.length === 0) throw new NothingPlayingError();
  return { playId: rows[0].play_id, value, likes: Number(rows[0].likes), dislikes: Number(rows[0].dislikes) };
}

/**
 * The instant after which a play's basis (observedAt, else receivedAt) must lie for it to be fresh:
 * lib/freshness.ts counts it fresh while its whole-second age is at most the threshold, i.e. while it is
 * less than threshold + 1 seconds old.
 */
export const freshAfter = (thresholdSeconds: number, now: Date): Date => new Date(now.getTime() - (thresholdSeconds + 1) * 1000);

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
 * Deletes a client's votes (its HMAC) and takes them out of the plays' counts, in `trx`. The DELETE
 * locks the vote rows and returns each one's latest value (a vote of the client committed meanwhile is
 * waited for and its value taken out), then the shard rows, in the order a vote takes them; the advisory
 * lock keeps two erasures of one client apart. Answers how many were deleted.
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
