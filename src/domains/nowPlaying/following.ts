import { isDeepStrictEqual } from 'node:util';
import type { Services } from '../../services.ts';
import { inTransaction } from '../../lib/db.ts';
import { invalidateReads } from '../../lib/readCache.ts';
import { feedMessage, feedRowUpsertStatement } from '../../feed/rows.ts';
import { numbered, pipelinedTransaction, type Statement } from '../../lib/pipeline.ts';
import { buildOnAir, FOLLOWED_LOOKBACK_MS, refreshOnAirIn, type FollowedObservation, type LiveBroadcast } from '../schedule/onair.ts';
import { CURRENT_ENTRY } from '../schedule/feed.ts';
import { lockStation, lockStationStatement } from '../stations/lock.ts';
import { MAX_BROADCAST_MS, type RundownItemRow } from '../schedule/model.ts';
import type { OnAir } from '../schedule/schemas.ts';
import { bestItem, outcomeFor, type PlannedItem } from './matching.ts';
import type { IngestResult, Outcome } from './model.ts';
import { DEFAULT_UP_NEXT, type UpNextSetting } from '../stations/model.ts';

// Rundown following (docs/now-playing.md#rundown-following-worker; rules 6–8 of
// docs/now-playing.md#responses), run by the `nowPlaying.follow` job after the observation was committed.
// Idempotent: an observation is followed once; a repeat returns what is stored.

interface Decision {
  outcome: Outcome;
  accepted: boolean;
  broadcast_id: string | null;
  rundown_item_id: string | null;
  score: number | null;
}

interface FollowRow {
  id: string;
  station_id: string;
  artist: string | null;
  title: string | null;
  sort_ms: number;
  receipt_seq: string;
  followed_at: Date | null;
  accepted: boolean;
  outcome: Outcome;
  /** The broadcast live at the observation's moment, with its program. */
  broadcast_id: string | null;
  broadcast_title: string | null;
  broadcast_nature: string | null;
  broadcast_starts_ms: number | null;
  broadcast_ends_ms: number | null;
  program_id: string | null;
  program_title: string | null;
  program_profile_id: string | null;
  /** Its rundown, in order. */
  items: PlannedRow[] | null;
  /** The broadcast live now (the one the on-air row shows). */
  now_broadcast_id: string | null;
  /** The newest observations of the broadcast followed to an item so far: matched or uncertain, and matched. */
  followed: FollowedJson | null;
  matched: FollowedJson | null;
  /** The stored on-air row. */
  on_air: unknown;
  on_air_deleted: boolean | null;
  /** When the stored on-air row was last written (the writer's clock), epoch ms. */
  on_air_updated_ms: number | null;
  /** The station's up-next setting as stored. */
  up_next: Partial<UpNextSetting> | null;
}

interface PlannedRow {
  id: string;
  position: number;
  kind: RundownItemRow['kind'];
  artist: string | null;
  title: string;
  duration_seconds: number | null;
  starts_ms: number;
  ends_ms: number | null;
}

interface FollowedJson {
  rundown_item_id: string;
  outcome: string;
  at_ms: number;
  seq: string;
}

// Live = published, not cancelled, covering the instant; the latest-starting one when several overlap.
const LIVE_AT = (instant: string) => `
  SELECT id, title, nature, program_id, starts_at, ends_at FROM broadcasts
   WHERE station_id = o.station_id AND published AND NOT cancelled AND cancellation_reason = ''
     AND starts_at <= ${instant} AND ends_at > ${instant} AND starts_at > ${instant} - make_interval(secs => ${MAX_BROADCAST_MS / 1000})
   ORDER BY starts_at DESC, id DESC LIMIT 1`;

// The newest observation of the broadcast followed to one of its items (with one of `outcomes`). Looked
// for among the station's newest RECENT observations first — an index scan that stops after a few rows —
// and only when none of those qualifies among all of the broadcast's (COALESCE evaluates the second
// only then). The planner estimates the filtered scan alone from station and broadcast selectivities as
// if they were independent (they are not: a broadcast belongs to one station), finds "almost no rows",
// and reads and sorts every observation of the broadcast on each follow.
const RECENT = 8;
// The item must still be in the broadcast's rundown: observations keep the id of an item deleted since
// (migration observation_follow_refs), and such an observation no longer counts as followed.
const FOLLOWED_FILTER = (outcomes: string) => `
  broadcast_id = b.id AND rundown_item_id IS NOT NULL AND outcome IN (${outcomes})
  AND sort_at >= b.starts_at - make_interval(secs => ${FOLLOWED_LOOKBACK_MS / 1000})
  AND EXISTS (SELECT 1 FROM rundown_items ri WHERE ri.id = rundown_item_id AND ri.broadcast_id = b.id)`;
const FOLLOWED_JSON = `json_build_object('rundown_item_id', rundown_item_id, 'outcome', outcome,
                                         'at_ms', (extract(epoch FROM sort_at) * 1000)::float8, 'seq', receipt_seq::text)`;
const FOLLOWED = (outcomes: string) => `COALESCE(
  (SELECT ${FOLLOWED_JSON}
     FROM (SELECT broadcast_id, rundown_item_id, outcome, sort_at, receipt_seq FROM observations
            WHERE station_id = o.station_id ORDER BY sort_at DESC, receipt_seq DESC LIMIT ${RECENT}) recent
    WHERE ${FOLLOWED_FILTER(outcomes)}
    ORDER BY sort_at DESC, receipt_seq DESC LIMIT 1),
  (SELECT ${FOLLOWED_JSON}
     FROM observations
    WHERE station_id = o.station_id AND ${FOLLOWED_FILTER(outcomes)}
    ORDER BY sort_at DESC, receipt_seq DESC LIMIT 1))`;

/**
 * Everything following needs, in one round trip (call it with the station locked, so the followed
 * observations and the on-air row it reads are current): the observation; the broadcast live at its
 * moment with program and rundown; the broadcast live now; the newest observations already followed
 * to that broadcast's rundown; and the stored on-air row. Times travel as epoch milliseconds.
 */
const LOAD_SQL =
  numbered(`SELECT o.id, o.station_id, o.artist, o.title, o.followed_at, o.accepted, o.outcome, o.receipt_seq::text AS receipt_seq,
            (extract(epoch FROM o.sort_at) * 1000)::float8 AS sort_ms,
            b.id AS broadcast_id, b.title AS broadcast_title, b.nature AS broadcast_nature,
            (extract(epoch FROM b.starts_at) * 1000)::float8 AS broadcast_starts_ms,
            (extract(epoch FROM b.ends_at) * 1000)::float8 AS broadcast_ends_ms,
            pr.id AS program_id, pr.title AS program_title, pr.profile_id AS program_profile_id,
            -- Kept up to date by a trigger when the items change (migration rundown_plans).
            (SELECT items FROM rundown_plans WHERE broadcast_id = b.id) AS items,
            n.id AS now_broadcast_id,
            ${FOLLOWED("'matched', 'uncertain'")} AS followed,
            ${FOLLOWED("'matched'")} AS matched,
            f.data AS on_air, f.deleted AS on_air_deleted, (extract(epoch FROM f.updated_at) * 1000)::float8 AS on_air_updated_ms,
            (SELECT up_next FROM stations WHERE id = o.station_id) AS up_next
       FROM observations o
       LEFT JOIN LATERAL (${LIVE_AT('o.sort_at')}) b ON true
       LEFT JOIN programs pr ON pr.id = b.program_id
       LEFT JOIN LATERAL (${LIVE_AT('?::timestamptz')}) n ON true
       LEFT JOIN feed_rows f ON f.station_id = o.station_id AND f.kind = 'on-air' AND f.entry = '${CURRENT_ENTRY}'
      WHERE o.id = ?`);

const loadStatement = (observationId: string, now: Date): Statement => ({
  name: 'nowplaying_load_for_following',
  text: LOAD_SQL,
  values: [now, now, now, observationId],
});

const STORE_OUTCOME_SQL =
  'UPDATE observations SET outcome = $2, accepted = $3, broadcast_id = $4, rundown_item_id = $5, score = $6, followed_at = $7 WHERE id = $1';
const storeOutcomeStatement = (observationId: string, d: Decision, now: Date): Statement => ({
  name: 'nowplaying_store_outcome',
  text: STORE_OUTCOME_SQL,
  values: [observationId, d.outcome, d.accepted, d.broadcast_id, d.rundown_item_id, d.score, now],
});

export function decide(observation: FollowRow): Decision {
  const broadcastId = observation.broadcast_id;
  if (!broadcastId) return { outcome: 'no-live-broadcast', accepted: false, broadcast_id: null, rundown_item_id: null, score: null };
  const items: PlannedItem[] = (observation.items ?? []).map((r) => ({
    id: r.id,
    artist: r.artist,
    title: r.title,
    plannedStartsMs: r.starts_ms,
    plannedEndsMs: r.ends_ms,
  }));
  const best = bestItem({ artist: observation.artist, title: observation.title ?? '' }, items, observation.sort_ms);
  if (!best)
    return { outcome: 'on-air-not-following-rundown', accepted: false, broadcast_id: broadcastId, rundown_item_id: null, score: null };
  const outcome = outcomeFor(best.score);
  return {
    outcome,
    accepted: true,
    broadcast_id: broadcastId,
    // An ignored observation names no item: it was not matched to the rundown.
    rundown_item_id: outcome === 'ignored' ? null : best.item.id,
    score: Math.round(best.score * 1e6) / 1e6,
  };
}

const followedOf = (json: FollowedJson | null): (FollowedObservation & { seq: bigint }) | null =>
  json ? { rundown_item_id: json.rundown_item_id, outcome: json.outcome, at: new Date(json.at_ms), seq: BigInt(json.seq) } : null;

/** The later of two followed observations in the "latest" order: moment, then receipt. */
function newer<T extends FollowedObservation & { seq: bigint }>(a: T | null, b: T): T {
  if (!a) return b;
  const at = a.at.getTime() - b.at.getTime();
  return at > 0 || (at === 0 && a.seq > b.seq) ? a : b;
}

/**
 * The on-air row after this observation was followed, from what `LOAD_SQL` read — or null when
 * that is not enough (the broadcast live now is another one), and the row must be computed afresh.
 */
function onAirAfter(row: FollowRow, decision: Decision, now: Date): { data: OnAir } | null {
  if (!row.broadcast_id || row.now_broadcast_id !== row.broadcast_id) return null;
  const items: RundownItemRow[] = (row.items ?? []).map((item) => ({
    id: item.id,
    broadcast_id: row.broadcast_id as string,
    station_id: row.station_id,
    position: item.position,
    kind: item.kind,
    artist: item.artist,
    title: item.title,
    duration_seconds: item.duration_seconds,
    planned_starts_at: new Date(item.starts_ms),
    planned_ends_at: item.ends_ms === null ? null : new Date(item.ends_ms),
  }));
  const self = {
    rundown_item_id: decision.rundown_item_id as string,
    outcome: decision.outcome,
    at: new Date(row.sort_ms),
    seq: BigInt(row.receipt_seq),
  };
  const followed = newer(followedOf(row.followed), self);
  const matched = decision.outcome === 'matched' ? newer(followedOf(row.matched), self) : followedOf(row.matched);
  const live: LiveBroadcast = {
    row: {
      id: row.broadcast_id,
      title: row.broadcast_title,
      starts_at: new Date(row.broadcast_starts_ms as number),
      ends_at: new Date(row.broadcast_ends_ms as number),
      nature: row.broadcast_nature as string,
    },
    program: { id: row.program_id as string, title: row.program_title as string, profileId: row.program_profile_id },
  };
  return { data: buildOnAir(live, items, now, followed, matched, { ...DEFAULT_UP_NEXT, ...row.up_next }) };
}

/**
 * Follows one stored observation and stores the outcome. One transaction under the station's lock, in
 * two round trips (lib/pipeline.ts): lock + load; then the outcome, the on-air row when this
 * observation moved it (matched or uncertain: its position and `followed`) and COMMIT. The on-air row is
 * published after commit.
 */
export async function followObservation(svc: Services, observationId: string, knownStationId?: string): Promise<IngestResult> {
  const stationId = knownStationId ?? (await stationOfObservation(svc, observationId));
  // The station (and its observations) may have been deleted meanwhile: nothing to follow.
  if (!stationId) return RECORDED;
  let now = svc.clock.now();
  const followed = await pipelinedTransaction(svc.db, async (tx) => {
    const [locked, loaded] = await tx.send([lockStationStatement(stationId), loadStatement(observationId, now)]);
    let row = loaded[0] as unknown as FollowRow | undefined;
    if (locked.length === 0 || !row || row.station_id !== stationId) return { result: RECORDED };
    // `now` was read before the lock was granted. If the on-air row was written since (a schedule
    // boundary, another follow), what is live "now" must be judged at a later instant than that write,
    // or an older broadcast could be written over a newer one: load again (rare, one round trip more).
    if (row.on_air_updated_ms !== null && row.on_air_updated_ms >= now.getTime()) {
      now = svc.clock.now();
      row = (await tx.send([loadStatement(observationId, now)]))[0][0] as unknown as FollowRow;
    }
    // Followed before (a retried job): that outcome stands.
    if (row.followed_at !== null) return { result: { accepted: row.accepted, outcome: row.outcome } as IngestResult };
    const decision = decide(row);
    const result = { accepted: decision.accepted, outcome: decision.outcome } as IngestResult;
    // Tied to a broadcast: `track-history?broadcastId=` lists it from now on.
    const tied = decision.broadcast_id !== null;
    const store = storeOutcomeStatement(observationId, decision, now);
    // Only matched and uncertain observations move the on-air row (its position and `followed`).
    const moves = decision.broadcast_id !== null && (decision.outcome === 'matched' || decision.outcome === 'uncertain');
    const next = moves ? onAirAfter(row, decision, now) : null;
    if (!next || (row.on_air_deleted === false && isDeepStrictEqual(row.on_air, next.data))) {
      await tx.commit([store]);
      // No `next` for a moving observation: the broadcast live now is another one, and the on-air row
      // is computed afresh below.
      return { result, tied, refresh: moves && !next };
    }
    const onAir = { stationId, kind: 'on-air' as const, entry: CURRENT_ENTRY, data: next.data };
    const [, upserted] = await tx.commit([store, feedRowUpsertStatement(onAir, now)]);
    if (upserted.length === 0) throw new Error(`station ${stationId} does not exist`);
    return { result, tied, message: feedMessage(onAir, Number(upserted[0].seq), now) };
  });
  // The ingest's own invalidation came before this broadcast was stored on the observation, so a
  // track history filtered by broadcast that was read in between is dropped again, in every web process.
  const invalidated = followed.tied ? invalidateReads(svc, stationId, 'nowPlaying') : Promise.resolve();
  if (followed.message) {
    // Not awaited: the job's result (the answer a request waits for) goes out right behind it on the same
    // Redis connection instead of a round trip later. A lost row is caught up by seq (docs/realtime.md).
    svc.bus.publish(followed.message).catch((err: unknown) => svc.logger.warn({ err, stationId }, 'could not publish the on-air row'));
  }
  if (followed.refresh) {
    await inTransaction(svc.db, async (tx) => {
      if (!(await lockStation(tx, stationId))) return;
      const at = svc.clock.now();
      await refreshOnAirIn(tx, svc.bus, stationId, at, at);
    });
  }
  await invalidated;
  return followed.result;
}

const RECORDED: IngestResult = { accepted: true, outcome: 'recorded' };

/** Which station an observation belongs to (null when it is gone). */
async function stationOfObservation(svc: Services, observationId: string): Promise<string | null> {
  const row = await svc
    .db('observations')
    .where({ id: observationId })
    .first<{ station_id: string } | undefined>('station_id')
    .options({ name: 'nowplaying_station_of_observation' });
  return row?.station_id ?? null;
}
