import { inTransaction } from '../../lib/db.ts';
import { PushNotConfiguredError } from '../../lib/errors.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { requirePushConfigured } from '../push/notifications/commands.ts';
import { RETENTION_MS, type NotificationRow } from '../push/notifications/model.ts';
import { queueNotification, requeueQueued } from '../push/notifications/queue.ts';
import { reminderText } from './body.ts';
import { dueCte, dueGroups, LATE_LIMIT_MS, type DueGroup } from './due.ts';

// Reminders go out as push notifications (`source: "reminder"`, topic `reminders`, `broadcastId`): one
// per (broadcast, due time), created through push's door (queueNotification) at its due instant for the
// devices due then, and sent by the push machinery (pace, claims, crash takeover, cancel). Timing
// (docs/push.md#follows-and-reminders):
// - `reminders.tick` every TICK_MS (a repeatable job: one per interval, whichever worker takes it)
//   fires what is due now (a broadcast created or moved late) and plans a delayed `reminders.fire` job
//   at each due instant of the next LOOKAHEAD_MS, keyed by (station, instant) so planning twice adds
//   nothing;
// - `reminders.fire` re-reads the schedule and the follows at its instant and fires what is due then.
// At most once per (device, broadcast): push sends a device at most one notification about a broadcast
// (the devices an earlier reminder of it reached are left out); a second worker firing the same group
// waits on the first's push_reminder_groups row, taken in the transaction that creates the notification,
// and then finds it taken. The tick's cost does not grow with the followers: it probes, per upcoming
// broadcast, which remindBeforeMinutes anyone chose (due.ts); only firing a group reads its devices.

export const TICK_MS = 5000;
export const LOOKAHEAD_MS = 60_000;

type Svc = Pick<Services, 'db' | 'config' | 'clock' | 'jobs' | 'logger' | 'webhooks' | 'stations'>;

interface BroadcastFacts {
  program_id: string;
  program: string;
  presenters: string[];
}

async function broadcastFacts(svc: Svc, broadcastId: string): Promise<BroadcastFacts | undefined> {
  const result = await svc.db.raw<{ rows: BroadcastFacts[] }>(
    `SELECT b.program_id, p.title AS program,
            ARRAY(SELECT pr.title FROM presenters pr
                    JOIN unnest(coalesce(b.presenter_ids,
                                 ARRAY(SELECT pp.presenter_id FROM program_presenters pp WHERE pp.program_id = b.program_id ORDER BY pp.position)))
                         WITH ORDINALITY AS x(id, n) ON x.id = pr.id
                   ORDER BY x.n) AS presenters
       FROM broadcasts b JOIN programs p ON p.id = b.program_id WHERE b.id = ?`,
    [broadcastId],
  );
  return result.rows[0];
}

/**
 * Creates the notification of one (broadcast, due time) with the devices still due then, and queues
 * its sending. Null when there is nothing to send: reminders switched off, push not configured, every
 * device already reminded, or another worker fired it first.
 */
export async function fireGroup(svc: Svc, station: Station, group: DueGroup): Promise<NotificationRow | null> {
  const setting = station.reminders;
  if (!setting.enabled) return null;
  let provider;
  try {
    provider = await requirePushConfigured(svc, station);
  } catch (err) {
    if (err instanceof PushNotConfiguredError) return null;
    throw err;
  }
  const facts = await broadcastFacts(svc, group.broadcastId);
  if (!facts) return null;
  const now = svc.clock.now();
  const minutes = Math.round((group.startsAt.getTime() - group.dueAt.getTime()) / 60_000);
  const text = reminderText(setting, {
    program: facts.program,
    presenters: facts.presenters,
    station: station.name,
    timezone: station.timezone,
    startsAt: group.startsAt,
    minutes,
  });
  // A reminder not delivered by 5 minutes after the start is not delivered at all (it expires).
  const ttlSeconds = Math.max(30, Math.ceil((group.startsAt.getTime() + LATE_LIMIT_MS - now.getTime()) / 1000));
  const created = await inTransaction(svc.db, async (tx) => {
    // The group is taken first: a second firing (another worker, a retry) waits here, then finds it taken.
    const taken = await tx
      .trx('push_reminder_groups')
      .insert({ broadcast_id: group.broadcastId, due_at: group.dueAt, station_id: station.id, fired_at: now })
      .onConflict(['broadcast_id', 'due_at'])
      .ignore()
      .returning('broadcast_id');
    if (taken.length === 0) return null;
    const due = dueCte({ now, until: now, stationId: station.id, broadcastId: group.broadcastId });
    const notification = await queueNotification(svc, tx, {
      stationId: station.id,
      provider,
      notification: {
        topic: 'reminders',
        source: 'reminder',
        broadcastId: group.broadcastId,
        dueAt: group.dueAt,
        title: text.title,
        body: text.body,
        data: { type: 'reminder', programId: facts.program_id, broadcastId: group.broadcastId, startsAt: group.startsAt.toISOString() },
        ttlSeconds,
      },
      devices: { tokenHashes: tx.trx.raw(`WITH ${due.sql} SELECT token_hash FROM due WHERE due_at = ?`, [...due.bindings, group.dueAt]) },
      now,
    });
    // None: nobody left to remind at this due time (each was due earlier, by another follow, or reminded).
    if (notification === null) return null;
    await tx
      .trx('push_reminder_groups')
      .where({ broadcast_id: group.broadcastId, due_at: group.dueAt })
      .update({ notification_id: notification.id });
    return notification;
  });
  if (created)
    svc.logger.info(
      { stationId: station.id, broadcastId: group.broadcastId, notificationId: created.id, targeted: created.targeted },
      'reminder fired',
    );
  return created;
}

/** Fires every reminder due by now (of one station, or all); the notifications created. */
export async function fireDue(svc: Svc, stationId?: string): Promise<NotificationRow[]> {
  const now = svc.clock.now();
  const fired: NotificationRow[] = [];
  for (const group of await dueGroups(svc.db, { now, until: now, stationId })) {
    const station = await svc.stations.byIdOrNull(group.stationId);
    if (!station) continue;
    const row = await fireGroup(svc, station, group);
    if (row) fired.push(row);
  }
  return fired;
}

export const fireJobId = (stationId: string, at: Date): string => `reminders.fire.${stationId}.${at.getTime()}`;

/**
 * The tick: fires what is due now, plans a `reminders.fire` job at each due instant of the next
 * LOOKAHEAD_MS, and queues again the sending of a reminder whose job could not be queued.
 */
export async function tick(svc: Svc): Promise<{ fired: number; planned: number }> {
  const fired = await fireDue(svc);
  const now = svc.clock.now();
  const upcoming = await dueGroups(svc.db, { now, from: now, until: new Date(now.getTime() + LOOKAHEAD_MS) });
  const instants = new Map<string, { stationId: string; at: Date }>();
  for (const g of upcoming) if (g.dueAt > now) instants.set(fireJobId(g.stationId, g.dueAt), { stationId: g.stationId, at: g.dueAt });
  await Promise.all(
    [...instants].map(([jobId, { stationId, at }]) =>
      svc.jobs.enqueue('reminders.fire', { stationId, at: at.toISOString() }, { jobId, delay: Math.max(0, at.getTime() - now.getTime()) }),
    ),
  );
  await requeueQueued(svc, { source: 'reminder', createdBefore: new Date(now.getTime() - 10_000) });
  // Fired groups are kept as long as notifications (their broadcasts are long over by then).
  await svc
    .db('push_reminder_groups')
    .where('fired_at', '<', new Date(now.getTime() - RETENTION_MS))
    .delete();
  return { fired: fired.length, planned: instants.size };
}

const tickRegistered = new WeakSet<object>();

/** Registers the repeatable tick once per process (the worker role). */
export async function ensureReminderTick(svc: Pick<Services, 'jobs'>): Promise<void> {
  if (tickRegistered.has(svc.jobs)) return;
  await svc.jobs.queue('push').upsertJobScheduler('reminders.tick', { every: TICK_MS }, { name: 'reminders.tick', data: {} });
  tickRegistered.add(svc.jobs);
}
