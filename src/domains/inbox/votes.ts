import type { Knex } from 'knex';
import type { Db } from '../../lib/db.ts';
import { runStatement } from '../../lib/pipeline.ts';
import { ModuleDisabledError, NothingPlayingError } from '../../lib/errors.ts';
import type { Services } from '../../services.ts';
import { latestObservationSql } from '../nowPlaying/queries.ts';
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

/** One client's vote in a batch: its HMAC, pseudonym, shard and value. */
export interface Ballot {
  clientHash: string;
  client: string;
  shard: number;
  value: 1 | -1 | 0;
}

/**
 * The votes of a batch (docs/inbox.md#how-it-works, "Votes") in one autocommit statement, one round trip:
 * - `play`: the play on air, read by the statement itself (the latest observation as latestTrack chooses
 *   it: nowPlaying's `latestObservationSql`), so the votes land on the play that was on air when
 *   Postgres ran it — before a song change commits the old play, after it the new one, never a play
 *   that is not on air;
 * - `cast_vote` writes each client's vote (0, a withdrawal, is kept as 0) and returns the value it
 *   replaced: `previous`, which the ON CONFLICT update sets from the row it locked (the latest committed
 *   vote, not the statement's snapshot), so two votes of one client at once — two web processes' batches —
 *   wait for each other's row and the second takes out what the first put in: no difference is lost or
 *   counted twice, with no client lock;
 * - `counted` adds each shard's difference (an upsert, under that row's lock); the other shards are added
 *   as they are.
 * Every statement locks its vote rows in client-HMAC order, then its shard rows in shard order (the
 * aggregate between them reads every vote first), so two batches at once never deadlock; erasure takes
 * a client's vote rows, then its shard's. A client appears at most once in a batch. No row: nothing is
 * on air (409).
 */
const VOTE_SQL = `
  WITH ballot AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::smallint[], $4::smallint[])
                  AS b(client_hash, client, shard, value)
  ), play AS (
    ${latestObservationSql('id, is_playing, title, coalesce(observed_at, received_at) AS basis', '$5::text')}
  ), on_air AS (
    SELECT id FROM play WHERE is_playing AND title IS NOT NULL AND basis > $6::timestamptz
  ), cast_vote AS (
    INSERT INTO inbox_votes (observation_id, client_hash, station_id, client, value, voted_at, previous)
    SELECT on_air.id, b.client_hash, $5, b.client, b.value, $7::timestamptz, NULL
      FROM on_air, ballot b ORDER BY b.client_hash
    ON CONFLICT (observation_id, client_hash) DO UPDATE
      SET previous = inbox_votes.value, value = EXCLUDED.value, voted_at = EXCLUDED.voted_at
    RETURNING client_hash, value, previous
  ), delta AS (
    SELECT b.shard,
           sum((v.value = 1)::int - (v.previous IS NOT DISTINCT FROM 1)::int) AS likes,
           sum((v.value = -1)::int - (v.previous IS NOT DISTINCT FROM -1)::int) AS dislikes
      FROM cast_vote v JOIN ballot b USING (client_hash) GROUP BY b.shard
  ), counted AS (
    INSERT INTO inbox_vote_counts (observation_id, shard, station_id, likes, dislikes)
    SELECT on_air.id, d.shard, $5, d.likes, d.dislikes FROM on_air, delta d ORDER BY d.shard
    ON CONFLICT (observation_id, shard) DO UPDATE
      SET likes = inbox_vote_counts.likes + EXCLUDED.likes, dislikes = inbox_vote_counts.dislikes + EXCLUDED.dislikes
    RETURNING shard, likes, dislikes
  )
  SELECT on_air.id AS play_id,
         (SELECT coalesce(sum(likes), 0) FROM counted) + coalesce(sum(c.likes), 0) AS likes,
         (SELECT coalesce(sum(dislikes), 0) FROM counted) + coalesce(sum(c.dislikes), 0) AS dislikes
    FROM on_air
    LEFT JOIN inbox_vote_counts c ON c.observation_id = on_air.id AND c.shard NOT IN (SELECT shard FROM counted)
   GROUP BY on_air.id`;

/**
 * Casts a batch of votes (each client at most once) on the station's play on air; answers the play and
 * its counts after the batch, or null when nothing is on air.
 */
export async function castVotes(
  db: Db,
  station: Pick<Station, 'id' | 'nowPlayingFreshnessSeconds'>,
  ballots: readonly Ballot[],
  now: Date,
): Promise<{ playId: string; likes: number; dislikes: number } | null> {
  const rows = (await runStatement(db, {
    name: 'inbox_votes_cast',
    text: VOTE_SQL,
    values: [
      ballots.map((b) => b.clientHash),
      ballots.map((b) => b.client),
      ballots.map((b) => b.shard),
      ballots.map((b) => b.value),
      station.id,
      freshAfter(station.nowPlayingFreshnessSeconds, now),
      now,
    ],
  })) as Array<{ play_id: string; likes: string | number; dislikes: string | number }>;
  if (rows.length === 0) return null;
  return { playId: rows[0].play_id, likes: Number(rows[0].likes), dislikes: Number(rows[0].dislikes) };
}

// Group commit: a process sends a station's votes one statement at a time. A vote arriving while a
// statement is out waits for it and goes with the next one, with every other vote that came meanwhile
// (a client already in it waits for the one after). A vote alone goes at once: batching adds no delay,
// it only replaces a queue of statements (each a round trip, a parse, a commit) by fewer, larger ones.
const MAX_BATCH = 500;

/**
 * A batch's answers are released SETTLE_CHUNK at a time, one event-loop turn apart: each answer is a
 * response written, and a few hundred of them in one turn would keep every request that arrived
 * meanwhile — the cached now-playing reads polled during the same song change — waiting behind them.
 */
const SETTLE_CHUNK = 32;

function settle(batch: readonly Waiting[], answer: (w: Waiting) => void, from = 0): void {
  const end = Math.min(from + SETTLE_CHUNK, batch.length);
  for (let i = from; i < end; i++) answer(batch[i]);
  if (end < batch.length) setImmediate(settle, batch, answer, end);
}

interface Waiting {
  ballot: Ballot;
  resolve(result: VoteResult): void;
  reject(err: unknown): void;
}

class StationVotes {
  private readonly queue: Waiting[] = [];
  private sending = false;
  private svc: VoteServices;
  private station: Station;
  constructor(svc: VoteServices, station: Station) {
    this.svc = svc;
    this.station = station;
  }

  add(svc: VoteServices, station: Station, ballot: Ballot): Promise<VoteResult> {
    this.svc = svc;
    this.station = station; // the latest settings seen (freshness)
    return new Promise<VoteResult>((resolve, reject) => {
      this.queue.push({ ballot, resolve, reject });
      if (!this.sending) void this.send();
    });
  }

  private async send(): Promise<void> {
    this.sending = true;
    try {
      while (this.queue.length > 0) {
        const batch: Waiting[] = [];
        const rest: Waiting[] = [];
        const clients = new Set<string>();
        for (const waiting of this.queue) {
          if (batch.length < MAX_BATCH && !clients.has(waiting.ballot.clientHash)) {
            clients.add(waiting.ballot.clientHash);
            batch.push(waiting);
          } else rest.push(waiting);
        }
        this.queue.splice(0, this.queue.length, ...rest);
        try {
          const cast = await castVotes(
            this.svc.db,
            this.station,
            batch.map((w) => w.ballot),
            this.svc.clock.now(),
          );
          settle(batch, (w) => (cast ? w.resolve({ ...cast, value: w.ballot.value }) : w.reject(new NothingPlayingError())));
        } catch (err) {
          settle(batch, (w) => w.reject(err));
        }
      }
    } finally {
      this.sending = false;
    }
  }
}

/** Each database's (a process has one; tests start several) stations' vote batches. */
const batches = new WeakMap<Db, Map<string, StationVotes>>();

/** The client's vote on the play on air: stored, replaced or withdrawn; answers the play's counts after it. */
export async function vote(svc: VoteServices, station: Station, clientId: string, value: 1 | -1 | 0): Promise<VoteResult> {
  if (!station.inbox.likes) throw new ModuleDisabledError('inbox likes');
  const { clientHash, client } = clientIdentity(svc.config.secret, station.id, clientId);
  let stations = batches.get(svc.db);
  if (!stations) batches.set(svc.db, (stations = new Map()));
  let votes = stations.get(station.id);
  if (!votes) stations.set(station.id, (votes = new StationVotes(svc, station)));
  return votes.add(svc, station, { clientHash, client, shard: shardOf(clientHash), value });
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
