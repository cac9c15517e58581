import { inTransaction } from '../../lib/db.ts';
import { PushNotConfiguredError } from '../../lib/errors.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { requirePushConfigured } from '../push/notifications/commands.ts';
import { RETENTION_MS, type NotificationRow } from '../push/notifications/model.ts';
import { enqueueSend, insertRow } from '../push/notifications/queue.ts';
import { reminderText } from './body.ts';
import { dueCte, dueGroups, LATE_LIMIT_MS, type DueGroup } from './due.ts';

// Reminders go out as push notifications (`source: "reminder"`, topic `reminders`, `broadcastId`): one
// per (broadcast, due time), created at its due instant with its targets fixed then, and sent by the
// push machinery (send.ts: pace, claims, crash takeover, cancel). Timing (docs/push.md, "Reminders"):
// - `reminders.tick` every TICK_MS (a repeatable job: one per interval, whichever worker takes it)
//   fires what is due now (a broadcast created or moved late) and plans a delayed `reminders.fire` job
//   at each due instant of the next LOOKAHEAD_MS, keyed by (station, instant) so planning twice adds
//   nothing;
// - `reminders.fire` re-reads the schedule and the follows at its instant and fires what is due then.
// At most once per (device, broadcast): the unique (broadcast_id, token_hash) of the delivery rows,
// written in the transaction that creates the notification (the devices already reminded are left out;
// a concurrent firing waits on the group row, below); a second worker firing the same group waits on the
// first's push_reminder_groups row and then finds it taken. The tick's cost does not grow with the
// followers: it probes, per upcoming broadcast, which remindBeforeMinutes anyone chose (due.ts); only
// firing a group reads its devices.

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
  const row = insertRow(
    station,
    provider,
    {
      topic: 'reminders',
      source: 'reminder',
      broadcastId: group.broadcastId,
      dueAt: group.dueAt,
      title: text.title,
      body: text.body,
      data: { type: 'reminder', programId: facts.program_id, broadcastId: group.broadcastId, startsAt: group.startsAt.toISOString() },
      ttlSeconds,
    },
    now,
    null,
  );
  const created = await inTransaction(svc.db, async ({ trx, afterCommit }) => {
    // The group is taken first: a second firing (another worker, a retry) waits here, then finds it taken.
    const taken = await trx('push_reminder_groups')
      .insert({ broadcast_id: group.broadcastId, due_at: group.dueAt, station_id: station.id, fired_at: now })
      .onConflict(['broadcast_id', 'due_at'])
      .ignore()
      .returning('broadcast_id');
    if (taken.length === 0) return null;
    await trx('push_notifications').insert(row);
    const cte = dueCte({ now, until: now, stationId: station.id, broadcastId: group.broadcastId });
    const result = await trx.raw<{ rows: NotificationRow[] }>(
      `WITH ${cte.sql}, targets AS (
         INSERT INTO push_deliveries (notification_id, token_hash, token, seq, state, broadcast_id)
         SELECT ?, d.token_hash, d.token, row_number() OVER (), 'pending', due.broadcast_id FROM due
           JOIN push_devices d ON d.station_id = due.station_id AND d.token_hash = due.token_hash AND d.provider = ?
          WHERE due.due_at = ?
         RETURNING 1
       )
       UPDATE push_notifications SET targeted = (SELECT count(*) FROM targets) WHERE id = ? RETURNING *`,
      [...cte.bindings, row.id, provider, group.dueAt, row.id],
    );
    const stored = result.rows[0];
    if (stored.targeted === 0) {
      // Nobody left to remind at this due time (each was due earlier, by another follow): no notification.
      await trx('push_notifications').where({ id: row.id }).delete();
      return null;
    }
    await trx('push_reminder_groups').where({ broadcast_id: group.broadcastId, due_at: group.dueAt }).update({ notification_id: row.id });
    afterCommit(() => enqueueSend(svc, stored));
    return stored;
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
  const stuck: NotificationRow[] = await svc
    .db('push_notifications')
    .where({ status: 'queued', source: 'reminder' })
    .andWhere('created_at', '<', new Date(now.getTime() - 10_000));
  for (const row of stuck) await enqueueSend(svc, row);
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
