import type { Tx } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import { presentBroadcast } from './presenter.ts';
import { broadcastById, broadcastOnAir } from './queries.ts';
import type { ResolvedBroadcast } from './model.ts';
import type { OnAir } from './schemas.ts';
import { localDate } from './window.ts';
import { emitAfterCommit } from '../webhooks/emit.ts';

// Schedule events: `broadcast.started` / `broadcast.ended` when the on-air row moves to another
// broadcast (timers at broadcast boundaries, or a schedule write that changes what is live), and
// `schedule.changed` for a broadcast written or deleted through the admin API.

export type ScheduleEventServices = Pick<Services, 'webhooks' | 'jobs' | 'clock' | 'logger' | 'config'>;

/**
 * Called with the on-air data before and after a change, inside the transaction (station locked).
 * Loads the broadcasts only when the station has a webhook for these events.
 */
export async function onAirTransition(
  tx: Tx,
  svc: ScheduleEventServices,
  stationId: string,
  previous: OnAir,
  next: OnAir,
  at: Date,
  removed?: ResolvedBroadcast | null,
): Promise<void> {
  const before = previous?.broadcast ?? null;
  const after = next?.broadcast ?? null;
  if (before?.id === after?.id) return;
  if (!(await svc.webhooks.wantsAny(stationId, ['broadcast.started', 'broadcast.ended'], tx.trx))) return;
  const station = await tx.trx('stations').where({ id: stationId }).first<{ timezone: string } | undefined>('timezone');
  if (!station) return;
  const now = svc.clock.now();
  if (before) {
    // Looked up by id: one cut short, cancelled, moved to another day or unpublished is described as it
    // is now; one deleted while on air as it was before the delete (the on-air row's fields, should the
    // caller not have it).
    const ended = (await broadcastById(tx.trx, stationId, before.id)) ?? (removed?.row.id === before.id ? removed : null);
    emitAfterCommit(
      tx,
      svc,
      stationId,
      'broadcast.ended',
      ended ? presentBroadcast(ended, station.timezone, now, svc.config.publicBaseUrl) : before,
    );
  }
  if (after) {
    const started = await broadcastOnAir(tx.trx, stationId, at);
    if (started && started.row.id === after.id)
      emitAfterCommit(tx, svc, stationId, 'broadcast.started', presentBroadcast(started, station.timezone, now, svc.config.publicBaseUrl));
  }
}

/** `schedule.changed` with the local dates a broadcast occupied before and after a write. */
export function scheduleChangedEvent(
  tx: Tx,
  svc: ScheduleEventServices,
  stationId: string,
  timezone: string,
  spans: Array<{ starts_at: Date; ends_at: Date } | null | undefined>,
): void {
  const known = spans.filter((s): s is { starts_at: Date; ends_at: Date } => !!s);
  if (known.length === 0) return;
  const start = new Date(Math.min(...known.map((s) => s.starts_at.getTime())));
  // The end instant is exclusive: a broadcast ending at midnight does not touch the next date.
  const end = new Date(Math.max(...known.map((s) => Math.max(s.ends_at.getTime() - 1, s.starts_at.getTime()))));
  emitAfterCommit(tx, svc, stationId, 'schedule.changed', { fromDate: localDate(start, timezone), throughDate: localDate(end, timezone) });
}
