import type { Knex } from 'knex';
import type { Services } from '../../services.ts';
import { refreshOnAir } from '../schedule/onair.ts';
import { bestItem, outcomeFor, type PlannedItem } from './matching.ts';
import type { IngestResult, ObservationRow, Outcome } from './model.ts';
import { observationById } from './queries.ts';

// Rundown following (decisions.md, Ingest rules 6–8), run by the `nowPlaying.follow` job after the
// observation was committed. Idempotent: an observation is followed once; a repeat returns what is stored.

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
  followed_at: Date | null;
  accepted: boolean;
  outcome: Outcome;
  live_broadcast_id: string | null;
  item_id: string | null;
  item_artist: string | null;
  item_title: string | null;
  planned_starts_ms: number | null;
  planned_ends_ms: number | null;
}

/**
 * The observation, the published non-cancelled broadcast covering its moment (the latest-starting one
 * if several overlap) and that broadcast's rundown, in one round trip: one row per item, or one row
 * with null item columns. `sort_ms` is the observation's moment (observedAt, else its receipt). Times
 * travel as epoch milliseconds: a 30-item rundown would otherwise cost 60 date parses per observation.
 */
async function loadForFollowing(db: Knex, observationId: string): Promise<FollowRow[]> {
  const result = await db.raw<{ rows: FollowRow[] }>(
    `SELECT o.id, o.station_id, o.artist, o.title, o.followed_at, o.accepted, o.outcome,
            (extract(epoch FROM o.sort_at) * 1000)::float8 AS sort_ms,
            b.id AS live_broadcast_id, i.id AS item_id, i.artist AS item_artist, i.title AS item_title,
            (extract(epoch FROM i.planned_starts_at) * 1000)::float8 AS planned_starts_ms,
            (extract(epoch FROM i.planned_ends_at) * 1000)::float8 AS planned_ends_ms
       FROM observations o
       LEFT JOIN LATERAL (
         SELECT id FROM broadcasts
          WHERE station_id = o.station_id AND published AND NOT cancelled AND cancellation_reason = ''
            AND starts_at <= o.sort_at AND ends_at > o.sort_at
          ORDER BY starts_at DESC LIMIT 1
       ) b ON true
       LEFT JOIN rundown_items i ON i.broadcast_id = b.id
      WHERE o.id = ?
      ORDER BY i.position`,
    [observationId],
  ).options({ name: 'nowplaying_load_for_following' });
  return result.rows;
}

export function decide(rows: FollowRow[]): Decision {
  const [observation] = rows;
  const broadcastId = observation.live_broadcast_id;
  if (!broadcastId) return { outcome: 'no-live-broadcast', accepted: false, broadcast_id: null, rundown_item_id: null, score: null };
  const items: PlannedItem[] = rows
    .filter((r) => r.item_id !== null)
    .map((r) => ({ id: r.item_id as string, artist: r.item_artist, title: r.item_title as string, plannedStartsMs: r.planned_starts_ms as number, plannedEndsMs: r.planned_ends_ms }));
  const best = bestItem({ artist: observation.artist, title: observation.title ?? '' }, items, observation.sort_ms);
  if (!best) return { outcome: 'on-air-not-following-rundown', accepted: false, broadcast_id: broadcastId, rundown_item_id: null, score: null };
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

/** Follows one stored observation and stores the outcome; the on-air row is refreshed afterwards. */
export async function followObservation(svc: Services, observationId: string): Promise<IngestResult> {
  const rows = await loadForFollowing(svc.db, observationId);
  const observation = rows[0];
  // The station (and its observations) may have been deleted meanwhile: nothing to follow.
  if (!observation) return { accepted: true, outcome: 'recorded' };
  if (observation.followed_at !== null) return { accepted: observation.accepted, outcome: observation.outcome };
  const decision = decide(rows);
  const [updated] = await svc
    .db<ObservationRow>('observations')
    .where({ id: observationId })
    .whereNull('followed_at')
    .update({ ...decision, followed_at: svc.clock.now() })
    .returning(['accepted', 'outcome'])
    .options({ name: 'nowplaying_store_outcome' });
  if (!updated) {
    // Followed concurrently by another attempt: that one's outcome stands.
    const current = await observationById(svc.db, observationId);
    return current ? { accepted: current.accepted, outcome: current.outcome } : { accepted: true, outcome: 'recorded' };
  }
  // Only matched and uncertain observations move the on-air row (its position and `followed`).
  if (decision.broadcast_id && (decision.outcome === 'matched' || decision.outcome === 'uncertain')) {
    // The outcome is stored either way; a failed refresh is caught up at the next boundary or match.
    await refreshOnAir(svc, observation.station_id).catch((err: unknown) => svc.logger.warn({ err, observationId }, 'on-air refresh after following failed'));
  }
  return { accepted: updated.accepted, outcome: updated.outcome };
}
