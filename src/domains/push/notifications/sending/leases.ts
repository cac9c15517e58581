import type { Services } from '../../../../services.ts';
import { LEASE_MS, OutcomeWriter, RENEW_MS, type NotificationRef } from './claims.ts';

// What one process knows of a notification it is sending (docs/push.md#cancel, docs/push.md#worker-deaths):
// whether it was stopped (cancelled, expired, failed), and, for each claim it holds, until when it may
// still start requests. The sender asks `gate(claim)` right before each provider request:
// - a cancel is confirmed by every process (the `push-cancel` invalidation sets `stopped` here before
//   the cancel answers); if one does not confirm (lost message, a process stuck or dead), the cancel
//   waits LEASE_MS after its commit instead, and by then every permit granted before the commit lapsed;
// - a permit is granted by a read that found the notification sending (the claim itself, or a renewal
//   every RENEW_MS that also refreshes the claims' `claimed_at`) and lasts LEASE_MS from when that read
//   was issued; a lapsed permit is renewed before the next request starts;
// - a claim that a renewal no longer finds was counted failed by another process (this one looked dead
//   for STALE_SECONDS): its remaining devices are never started.

export interface HeldClaim {
  lo: number;
  /** performance.now() until which requests of this claim may start. */
  permitUntil: number;
  /** Taken over: its pending devices were counted failed elsewhere. */
  lost: boolean;
}

export class Sending {
  stopped = false;
  readonly writer: OutcomeWriter;
  private readonly stopListeners = new Set<() => void>();
  private readonly claims = new Map<number, HeldClaim>();
  private renewing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly svc: Pick<Services, 'db' | 'logger'>;
  readonly id: string;
  users = 0;

  constructor(svc: Pick<Services, 'db' | 'logger'>, row: NotificationRef) {
    this.svc = svc;
    this.id = row.id;
    this.writer = new OutcomeWriter(svc, row);
    this.timer = setInterval(() => {
      if (this.claims.size > 0 && this.renewing === null) void this.renew();
    }, RENEW_MS);
    this.timer.unref();
  }

  /** A claim just made; `issuedAt` is when its statement (which found the notification sending) was issued. */
  hold(lo: number, issuedAt: number): HeldClaim {
    const held = { lo, permitUntil: issuedAt + LEASE_MS, lost: false };
    this.claims.set(lo, held);
    return held;
  }

  /** The claim is done with (its drop is written with the outcomes). */
  release(lo: number): void {
    this.claims.delete(lo);
  }

  /** May a request of this claim start now: true, false (never), or a renewal to wait for before asking again. */
  mayStart(held: HeldClaim): boolean | Promise<void> {
    if (this.stopped || held.lost) return false;
    if (performance.now() < held.permitUntil) return true;
    return this.renew();
  }

  /** No request of the notification starts here any more; the listeners (the lanes) settle what they hold. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const listener of this.stopListeners) listener();
  }

  /** `listener` runs once when the notification stops here; the answer removes it. */
  onStop(listener: () => void): () => void {
    this.stopListeners.add(listener);
    return () => this.stopListeners.delete(listener);
  }

  /** One renewal at a time; never rejects (a failed one is retried by the next ask, a little later). */
  renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => (this.renewing = null));
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    const issuedAt = performance.now();
    const los = [...this.claims.keys()];
    try {
      const result = await this.svc.db.raw<{ rows: Array<{ status: string | null; los: number[] }> }>(
        `WITH t AS (UPDATE push_claims SET claimed_at = now() WHERE notification_id = ? AND lo = ANY(?::int[]) RETURNING lo)
         SELECT (SELECT status FROM push_notifications WHERE id = ?) AS status, ARRAY(SELECT lo FROM t) AS los`,
        [this.id, los, this.id],
      );
      const { status, los: alive } = result.rows[0];
      const renewed = new Set(alive);
      for (const lo of los) {
        const held = this.claims.get(lo);
        if (!held) continue;
        if (!renewed.has(lo)) held.lost = true;
        else if (status === 'sending') held.permitUntil = Math.max(held.permitUntil, issuedAt + LEASE_MS);
      }
      if (status !== 'sending') this.stop();
    } catch (err) {
      this.svc.logger.warn({ err, notificationId: this.id }, 'could not renew push claims');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}

const registries = new WeakMap<object, Map<string, Sending>>();

function registryOf(svc: Pick<Services, 'invalidation'>): Map<string, Sending> {
  let registry = registries.get(svc.invalidation);
  if (!registry) {
    const created = new Map<string, Sending>();
    registries.set(svc.invalidation, (registry = created));
    svc.invalidation.on('push-cancel', (id) => {
      created.get(id)?.stop();
    });
  }
  return registry;
}

/** This process' state of a notification, shared by its jobs; `leave` it when a job ends. */
export function joinSending(svc: Pick<Services, 'db' | 'logger' | 'invalidation'>, row: NotificationRef): Sending {
  const registry = registryOf(svc);
  let sending = registry.get(row.id);
  if (!sending) registry.set(row.id, (sending = new Sending(svc, row)));
  sending.users++;
  return sending;
}

/** Writes what the job's lanes left and forgets the notification when its last job here ends. */
export async function leaveSending(svc: Pick<Services, 'invalidation'>, sending: Sending): Promise<void> {
  try {
    await sending.writer.drain();
  } finally {
    if (--sending.users === 0) {
      sending.close();
      const registry = registryOf(svc);
      if (registry.get(sending.id) === sending) registry.delete(sending.id);
    }
  }
}
