import type { Services } from '../../services.ts';
import { streamListeners } from './metrics.ts';
import { audienceStreams, type Sample, type StreamStats } from './model.ts';
import { CountUnavailable, STATUS_TIMEOUT_MS, getStatusJson } from './providers/http.ts';
import { icecastListeners } from './providers/icecast.ts';
import { shoutcastListeners } from './providers/shoutcast.ts';
import { pollStateKey, pollStates, recordPolls, storeSamples, type PollOutcome } from './samples.ts';

// One tick of the listener poller (the `audience.poll` job, every AUDIENCE_POLL_SECONDS): every stream
// with `stats` of every active station is asked for its count, a bounded number at a time, and the
// samples and poll states of the whole tick are written in two statements. A failed poll stores no
// sample: it records why (stream_polls.last_error, a worker log line) and the stream backs off.

/** Requests in flight at once: 2000 streams at a 10 s worst case still finish within a 30 s tick's budget of slow ones. */
const CONCURRENCY = 64;
/** A failing stream waits 2^failures poll intervals before its next try, at most this long. */
const MAX_BACKOFF_MS = 10 * 60_000;

export interface PollTarget {
  stationId: string;
  streamKey: string;
  stats: StreamStats;
}

export interface TickResult {
  polled: number;
  stored: number;
  failed: number;
  skipped: number;
}

/** The streams to poll: every stream entry with a usable `stats` of every active station. */
export async function pollTargets(svc: Pick<Services, 'db'>, stationIds?: string[]): Promise<PollTarget[]> {
  const query = svc
    .db('stations')
    .where('active', true)
    .whereRaw(`jsonb_typeof(profile->'streamUrls') = 'array'`)
    .select<Array<{ id: string; streams: unknown }>>('id', svc.db.raw(`profile->'streamUrls' AS streams`));
  if (stationIds) query.whereIn('id', stationIds);
  const rows = await query;
  const targets: PollTarget[] = [];
  for (const row of rows) {
    for (const stream of audienceStreams(row.streams)) {
      if (stream.stats) targets.push({ stationId: row.id, streamKey: stream.key, stats: stream.stats });
    }
  }
  return targets;
}

/** The listener count a stream's status document states; throws CountUnavailable with the reason. */
export async function readCount(stats: StreamStats, timeoutMs: number): Promise<number> {
  const doc = await getStatusJson(stats.url, timeoutMs);
  return stats.kind === 'icecast' ? icecastListeners(doc, stats.mount) : shoutcastListeners(doc);
}

export async function pollTick(
  svc: Pick<Services, 'db' | 'clock' | 'logger' | 'config'>,
  options: { timeoutMs?: number; stationIds?: string[] } = {},
): Promise<TickResult> {
  const pollMs = svc.config.audience.pollSeconds * 1000;
  const timeoutMs = options.timeoutMs ?? Math.min(STATUS_TIMEOUT_MS, Math.floor(pollMs / 2));
  const targets = await pollTargets(svc, options.stationIds);
  const states = await pollStates(svc.db, [...new Set(targets.map((t) => t.stationId))]);
  const now = svc.clock.now();
  // A stream that keeps failing is asked less often: a dead server is not hammered, a flapping one recovers soon.
  const due = targets.filter((t) => {
    const state = states.get(pollStateKey(t.stationId, t.streamKey));
    if (!state || state.failures === 0 || !state.lastPolledAt) return true;
    const wait = Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(state.failures, 10));
    return state.lastPolledAt.getTime() + wait <= now.getTime() + 1000;
  });
  // Every sample of a tick has the tick's instant: streams of a station line up, and a retried tick replaces, not duplicates.
  const at = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const samples: Sample[] = [];
  const outcomes: PollOutcome[] = [];
  let next = 0;
  const worker = async () => {
    while (next < due.length) {
      const target = due[next++];
      try {
        const listeners = await readCount(target.stats, timeoutMs);
        samples.push({ stationId: target.stationId, streamKey: target.streamKey, at, listeners, source: 'poll' });
        outcomes.push({ stationId: target.stationId, streamKey: target.streamKey, at, error: null });
        streamListeners.labels(target.stationId, target.streamKey).set(listeners);
      } catch (err) {
        const reason = err instanceof CountUnavailable ? err.message : `unexpected error: ${(err as Error).message}`;
        outcomes.push({ stationId: target.stationId, streamKey: target.streamKey, at, error: reason.slice(0, 500) });
        streamListeners.remove(target.stationId, target.streamKey);
        svc.logger.warn(
          { stationId: target.stationId, stream: target.streamKey, kind: target.stats.kind, reason },
          'listener count poll stored no sample',
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, worker));
  await storeSamples(svc.db, samples);
  await recordPolls(svc.db, outcomes);
  return { polled: due.length, stored: samples.length, failed: due.length - samples.length, skipped: targets.length - due.length };
}
