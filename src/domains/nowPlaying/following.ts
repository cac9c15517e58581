import type { Knex } from 'knex';
import type { Services } from '../../services.ts';
import { refreshOnAir } from '../schedule/onair.ts';
import { bestItem, outcomeFor, type PlannedItem } from './matching.ts';
import { momentOf, type IngestResult, type ObservationRow, type Outcome } from './model.ts';
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

/** The published, non-cancelled broadcast covering `at` (the latest-starting one if several overlap). */
async function liveBroadcastId(db: Knex, stationId: string, at: Date): Promise<string | null> {
  const row = await db('broadcasts')
    .select('id')
    .where({ station_id: stationId, published: true, cancelled: false, cancellation_reason: '' })
    .andWhere('starts_at', '<=', at)
    .andWhere('ends_at', '>', at)
    .orderBy('starts_at', 'desc')
    .first();
  return (row?.id as string | undefined) ?? null;
}

async function plannedItems(db: Knex, broadcastId: string): Promise<PlannedItem[]> {
  const rows = await db('rundown_items')
    .select('id', 'artist', 'title', 'planned_starts_at', 'planned_ends_at')
    .where({ broadcast_id: broadcastId })
    .orderBy('position');
  return rows.map((r) => ({
    id: r.id as string,
    artist: r.artist as string | null,
    title: r.title as string,
    plannedStartsAt: r.planned_starts_at as Date,
    plannedEndsAt: (r.planned_ends_at as Date | null) ?? null,
  }));
}

export async function decide(db: Knex, observation: ObservationRow): Promise<Decision> {
  const at = momentOf(observation);
  const broadcastId = await liveBroadcastId(db, observation.station_id, at);
  if (!broadcastId) return { outcome: 'no-live-broadcast', accepted: false, broadcast_id: null, rundown_item_id: null, score: null };
  const items = await plannedItems(db, broadcastId);
  const best = bestItem({ artist: observation.artist, title: observation.title ?? '' }, items, at);
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
  const observation = await observationById(svc.db, observationId);
  // The station (and its observations) may have been deleted meanwhile: nothing to follow.
  if (!observation) return { accepted: true, outcome: 'recorded' };
  if (observation.followed_at !== null) return { accepted: observation.accepted, outcome: observation.outcome };
  const decision = await decide(svc.db, observation);
  const [updated] = await svc
    .db<ObservationRow>('observations')
    .where({ id: observationId })
    .whereNull('followed_at')
    .update({ ...decision, followed_at: svc.clock.now() })
    .returning(['accepted', 'outcome']);
  if (!updated) {
    // Followed concurrently by another attempt: that one's outcome stands.
    const current = await observationById(svc.db, observationId);
    return current ? { accepted: current.accepted, outcome: current.outcome } : { accepted: true, outcome: 'recorded' };
  }
  if (decision.broadcast_id) {
    // The outcome is stored either way; a failed refresh is caught up at the next boundary or match.
    await refreshOnAir(svc, observation.station_id).catch((err: unknown) => svc.logger.warn({ err, observationId }, 'on-air refresh after following failed'));
  }
  return { accepted: updated.accepted, outcome: updated.outcome };
}
