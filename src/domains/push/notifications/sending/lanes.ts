import { finishNotification } from '../lifecycle.ts';
import { expiresAt, SEND_PARTS } from '../model.ts';
import { claim, type Claim } from './claims.ts';
import { deliver, type SendingJob } from './delivery.ts';
import type { HeldClaim } from './leases.ts';
import { stationPace } from './pacing.ts';

// A job's lanes (docs/push.md#how-sending-works-srcdomainspushnotifications): each takes the station's pace
// token, claims the batch a chunk at a time and delivers it, until nothing is left to claim or the
// notification stops.

/** Claim-send-record loops per job: while one lane waits on the database, the others send. */
const LANES = 8;
/** A lane claims this many rounds of its in-flight requests at a time (docs/push.md#worker-deaths). */
const CLAIM_ROUNDS = 8;

interface Held {
  claim: Claim;
  lease: HeldClaim;
  /** Counted failed by a stop before its delivery began. */
  settled: boolean;
  unlisten: () => void;
}

/**
 * Notifications with nothing left to claim, as this process learnt it: its other lanes and jobs stop at
 * once instead of each waiting for a pace token only to find the claim empty (16 lanes at Expo's pace of
 * six batches a second held a finished notification open for 2.7 s). Bounded: ids of long-finished
 * notifications are forgotten.
 */
const drained = new Set<string>();
function markDrained(id: string): void {
  if (drained.size >= 10_000) drained.clear();
  drained.add(id);
}

/** Runs the job's LANES lanes until none has anything left to claim (or the notification stopped or expired). */
export async function runLanes(job: SendingJob): Promise<void> {
  const { svc, row, sender, sending } = job;
  const pace = stationPace(svc, row.station_id, row.provider, sender.maxBatch);
  // PUSH_CONCURRENCY is what one notification keeps in flight, over all its jobs and lanes.
  const perLane = Math.max(1, Math.ceil(svc.config.push.concurrency / (LANES * SEND_PARTS)));
  // Devices claimed at once by a lane: CLAIM_ROUNDS rounds of its requests in flight (an Expo request
  // carries a whole batch).
  const chunk = sender.provider === 'expo' ? pace.batch : Math.min(pace.batch, perLane * CLAIM_ROUNDS);
  const expired = () => svc.clock.now().getTime() >= expiresAt(row);

  /**
   * Claims `n` devices and holds the claim's lease at once (renewed from then on). Until its delivery
   * begins, a stop counts its devices failed at once (none was started).
   */
  const claimHeld = async (n: number): Promise<Held | null> => {
    const issuedAt = performance.now();
    const claimed = await claim(svc, row.id, n);
    if (claimed === null) return null;
    const held: Held = { claim: claimed, lease: sending.hold(claimed.lo, issuedAt), settled: false, unlisten: () => undefined };
    const settle = () => {
      held.settled = true;
      for (const c of claimed.devices) sending.writer.add(c.seq, 'failed', null, null, true);
      void sending.writer.flush();
    };
    if (sending.stopped) settle();
    else held.unlisten = sending.onStop(settle);
    return held;
  };
  const lane = async (): Promise<void> => {
    for (;;) {
      if (drained.has(row.id)) return;
      if (expired()) {
        await finishNotification(svc, row.id, 'expired');
        return;
      }
      if (!(await pace.acquire(() => drained.has(row.id) || sending.stopped))) return;
      // One pace token is a batch; it is claimed a chunk at a time, so a process that dies leaves few
      // devices claimed but never started (they count failed: nobody can know they were not sent). The
      // next chunk is claimed as soon as every request of this one has started, while the last answers
      // are awaited, so the lane's requests do not wait on the claim.
      let left = pace.batch;
      let next: Promise<Held | null> | null = claimHeld(Math.min(left, chunk));
      while (next !== null) {
        const held = await next;
        if (held === null) {
          markDrained(row.id);
          return;
        }
        left -= held.claim.size;
        let following: Promise<Held | null> | null = null;
        const claimNext = () => {
          if (following === null && left > 0 && !sending.stopped) following = claimHeld(Math.min(left, chunk));
        };
        held.unlisten();
        if (!held.settled) await deliver(job, { claim: held.claim, lease: held.lease, concurrency: perLane, allStarted: claimNext });
        else {
          sending.release(held.claim.lo);
          sending.writer.claimDone(held.claim.lo);
        }
        claimNext();
        next = following;
      }
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
}
