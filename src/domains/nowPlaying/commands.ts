import { UnauthenticatedError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { invalidateReads } from '../../lib/readCache.ts';
import type { Services } from '../../services.ts';
import { trackStored } from '../artwork/ingest.ts';
import { ingestArtOf } from '../artwork/pinCache.ts';
import type { Station } from '../stations/model.ts';
import { emitWebhookEvent } from '../webhooks/emit.ts';
import { fingerprintOf } from './bind.ts';
import { RECORDED, REJECTED, isResult, resultOf, tooFarAhead } from './ingestRules.ts';
import { FOLLOW_WAIT_MS, type IngestResult, type ObservationInput, type ObservationRow } from './model.ts';
import { observationById } from './queries.ts';
import { nowPlayingSeed } from './reads.ts';
import type { NowPlaying } from './schemas.ts';
import { storeObservation } from './store.ts';
import type { ObservationInsert } from './storeSql.ts';

// The ingest command: the ordered outcome rules of docs/now-playing.md#responses. Storage (rules 1–5) happens in one
// transaction that holds the station's row lock, so concurrent retries and collapse candidates of one
// station are decided one after the other; rundown following (rules 6–9) runs in the worker afterwards.

export async function ingestObservation(
  svc: Services,
  station: Station,
  input: ObservationInput,
  credentialId: string | null = null,
): Promise<IngestResult> {
  const receivedAt = svc.clock.now();
  // Waiting is bounded in real time, whatever clock the service runs on.
  const deadline = Date.now() + FOLLOW_WAIT_MS;
  // Rule 2 before storage. (Rule 1 cannot answer differently: an observation this far ahead was never stored.)
  if (tooFarAhead(input, receivedAt)) return REJECTED;

  const fingerprint = fingerprintOf(input);
  const pending = input.isPlaying && station.rundownFollowing;
  // An operator's pin is shown from the first frame (artwork/pinCache.ts).
  const decided = ingestArtOf(svc, station, input);
  const art = decided instanceof Promise ? await decided : decided;
  const values: ObservationInsert = {
    id: newId(),
    station_id: station.id,
    event_id: input.eventId,
    fingerprint,
    artist: input.artist,
    title: input.title,
    album: input.album,
    duration_seconds: input.durationSeconds,
    artwork_url: input.artworkUrl,
    source_track_id: input.sourceTrackId,
    isrc: input.isrc,
    is_playing: input.isPlaying,
    observed_at: input.observedAt,
    received_at: receivedAt,
    sort_at: input.observedAt ?? receivedAt,
    // Rules 4 and 5 are final here; otherwise `recorded` stands until the worker has followed it.
    outcome: input.isPlaying ? 'recorded' : 'not-playing',
    accepted: true,
    followed_at: pending ? null : receivedAt,
    credential_id: credentialId,
    artist_key: art.artistKey,
    title_key: art.titleKey,
    artwork_view: art.view,
  };
  let stored = await storeObservation(svc, station, input, values, receivedAt);

  if (stored.kind === 'duplicate') {
    // Read once this transaction's connection is back in the pool (a burst of retries must not wait for a second one).
    const existing = await svc.db<ObservationRow>('observations').where({ station_id: station.id, event_id: input.eventId }).first();
    // The fingerprint tells a retry from misuse of the eventId.
    stored = existing && existing.fingerprint === fingerprint ? { kind: 'existing', row: existing } : { kind: 'conflict' };
  }
  if (stored.kind === 'conflict') return REJECTED;
  // Deleted meanwhile (its credentials with it): answered like an unknown station (docs/now-playing.md).
  if (stored.kind === 'gone') throw new UnauthenticatedError();
  if (stored.kind === 'stored') {
    // Committed: the now-playing row goes out, and rundown following starts, at once (the row is written
    // to Redis first; neither waits for the other's round trip).
    const published = stored.message ? svc.bus.publish(stored.message) : Promise.resolve();
    // Now-playing and track history show it from the next read on, in every web process.
    // A changed now-playing row travels with it: every web process answers from it at once.
    const seed = stored.message ? nowPlayingSeed(stored.message.data as NowPlaying, stored.row) : undefined;
    const invalidated = invalidateReads(svc, station.id, 'nowPlaying', seed);
    // The now-playing row changed: one webhook event, queued beside the publish (never awaited by the encoder).
    if (stored.message) void emitWebhookEvent(svc, station.id, 'now-playing.changed', stored.message.data);
    // Its art is looked up, checked and resolved by the worker; a follow-up row goes out when it changes.
    const resolveArt = trackStored(svc, station, stored.row, pending);
    if (!pending) {
      await Promise.all([published, invalidated]);
      return resultOf(stored.row);
    }
    const [, , result] = await Promise.all([published, invalidated, follow(svc, station.id, stored.row.id, deadline, true, resolveArt)]);
    return result;
  }
  // A retry or a collapsed repeat answers what its observation answers (waiting for its following too).
  if (stored.row.followed_at !== null) return resultOf(stored.row);
  return follow(svc, station.id, stored.row.id, deadline, false);
}

/**
 * Starts or joins rundown following of an observation and waits for it until `deadline`. The job id is
 * the observation id, so a retry that arrives before the original request enqueued the job adds the
 * same job, and every waiter hears the one result. A waiter that joins late asks the stored row, in
 * case the job finished before it began listening.
 */
async function follow(
  svc: Services,
  stationId: string,
  observationId: string,
  deadline: number,
  isNew: boolean,
  resolveArt = false,
): Promise<IngestResult> {
  const followedBefore = async (): Promise<IngestResult | undefined> => {
    const row = await observationById(svc.db, observationId);
    return row && row.followed_at !== null ? resultOf(row) : undefined;
  };
  try {
    const value = await svc.jobs.run(
      'nowPlaying.follow',
      resolveArt ? { observationId, stationId, resolveArt } : { observationId, stationId },
      observationId,
      deadline - Date.now(),
      isNew ? undefined : followedBefore,
    );
    if (isResult(value)) return value;
  } catch (err) {
    svc.logger.warn({ err, observationId }, 'rundown following could not be started or awaited');
  }
  // Rule 9: not finished in time. The worker may still have finished just now: report what is stored.
  return (await followedBefore()) ?? RECORDED;
}
