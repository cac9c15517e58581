import { UnauthenticatedError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { fingerprintOf } from './bind.ts';
import { NOW_PLAYING_ENTRY } from './feed.ts';
import { presentNowPlaying } from './presenter.ts';
import type { FeedMessage } from '../../feed/bus.ts';
import { feedMessage, feedRowBindings, feedRowCtes, type FeedRowInput } from '../../feed/rows.ts';
import { numbered, pipelinedTransaction, type Statement } from '../../lib/pipeline.ts';
import {
  COLLAPSE_WINDOW_MS,
  FOLLOW_WAIT_MS,
  MAX_FUTURE_MS,
  OUTCOMES,
  type IngestResult,
  type ObservationInput,
  type ObservationRow,
  type TrackRow,
} from './model.ts';
import { ingestContextOf, ingestContextStatements, observationById, reviveRow } from './queries.ts';
import { lockStationStatement } from '../stations/lock.ts';
import { invalidateReads } from '../../lib/readCache.ts';
import { emitWebhookEvent } from '../webhooks/emit.ts';
import { ingestArtOf } from '../artwork/pinCache.ts';
import { requestTrackArt } from '../artwork/requests.ts';
import type { TrackArtView } from '../artwork/trackArt.ts';

// The ingest command: decisions.md's ordered outcome rules. Storage (rules 1–5) happens in one
// transaction that holds the station's row lock, so concurrent retries and collapse candidates of one
// station are decided one after the other; rundown following (rules 6–9) runs in the worker afterwards.

const REJECTED: IngestResult = { accepted: false, outcome: 'rejected' };
const RECORDED: IngestResult = { accepted: true, outcome: 'recorded' };

type Stored =
  /** `message` is null when the now-playing row did not change (a late observation of an earlier moment). */
  | { kind: 'stored'; row: ObservationRow; message: FeedMessage | null }
  | { kind: 'existing'; row: ObservationRow }
  | { kind: 'conflict' }
  | { kind: 'duplicate' }
  | { kind: 'gone' };

const sameTrack = (row: ObservationRow, input: ObservationInput): boolean =>
  row.artist === input.artist && row.title === input.title && row.album === input.album && row.is_playing === input.isPlaying;

/** Rule 3: no eventId on either side, the same track and play state, received less than 30 s apart. */
function collapses(previous: ObservationRow, input: ObservationInput, receivedAt: Date): boolean {
  return (
    input.eventId === null &&
    previous.event_id === null &&
    sameTrack(previous, input) &&
    receivedAt.getTime() - previous.received_at.getTime() < COLLAPSE_WINDOW_MS
  );
}

const resultOf = (row: Pick<ObservationRow, 'accepted' | 'outcome'>): IngestResult => ({ accepted: row.accepted, outcome: row.outcome });

function isResult(value: unknown): value is IngestResult {
  const v = value as Partial<IngestResult> | null;
  return !!v && typeof v.accepted === 'boolean' && (OUTCOMES as readonly string[]).includes(v.outcome as string);
}

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
  if (input.observedAt && input.observedAt.getTime() - receivedAt.getTime() > MAX_FUTURE_MS) return REJECTED;

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
  let stored = await storeUsually(svc, station, input, values, receivedAt);
  if (stored.kind === 'decide') stored = await storeDeciding(svc, station, input, values, receivedAt);

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
    const invalidated = invalidateReads(svc, station.id, 'nowPlaying');
    // The now-playing row changed: one webhook event, queued beside the publish (never awaited by the encoder).
    if (stored.message) void emitWebhookEvent(svc, station.id, 'now-playing.changed', stored.message.data);
    // Its art is looked up, checked and resolved by the worker; a follow-up row goes out when it changes.
    requestTrackArt(svc, station, stored.row);
    if (!pending) {
      await Promise.all([published, invalidated]);
      return resultOf(stored.row);
    }
    const [, , result] = await Promise.all([published, invalidated, follow(svc, station.id, stored.row.id, deadline, true)]);
    return result;
  }
  // A retry or a collapsed repeat answers what its observation answers (waiting for its following too).
  if (stored.row.followed_at !== null) return resultOf(stored.row);
  return follow(svc, station.id, stored.row.id, deadline, false);
}

/** The `now-playing` row showing `shown`. */
function nowPlayingRow(station: Station, shown: TrackRow, receivedAt: Date): FeedRowInput {
  return { stationId: station.id, kind: 'now-playing', entry: NOW_PLAYING_ENTRY, data: presentNowPlaying(station, shown, receivedAt) };
}

const asShown = (values: ObservationInsert): TrackRow => ({ ...values, receipt_seq: 0 }) as TrackRow;

function storedOf(row: (ObservationRow & { feed_seq?: number }) | undefined, feedRow: FeedRowInput | null, receivedAt: Date): Stored {
  // Rule 1: this eventId was stored before (the unique constraint decided); its row is read afterwards.
  if (!row) return { kind: 'duplicate' };
  return { kind: 'stored', row, message: feedRow ? feedMessage(feedRow, Number(row.feed_seq), receivedAt) : null };
}

/**
 * The usual ingest in one round trip: lock the station, insert the observation and rewrite the
 * now-playing row showing it, COMMIT — written together (lib/pipeline.ts). The insert is guarded by
 * what would need a decision here: a repeat without eventId within the collapse window of the last
 * observation received (rule 3), or an observation of the station describing a later moment (the row
 * must then show that one). When the guard holds back, the last received observation comes back (read
 * under the lock): a collapse is answered from it, anything else is decided by `storeDeciding`.
 */
async function storeUsually(
  svc: Services,
  station: Station,
  input: ObservationInput,
  values: ObservationInsert,
  receivedAt: Date,
): Promise<Stored | { kind: 'decide' }> {
  const feedRow = nowPlayingRow(station, asShown(values), receivedAt);
  const [locked, answered] = await pipelinedTransaction(svc.db, (tx) =>
    tx.commit([lockStationStatement(station.id), guardedInsertStatement(values, feedRow, receivedAt)]),
  );
  // Deleted meanwhile (its credentials with it).
  if (locked.length === 0) return { kind: 'gone' };
  const answer = answered[0] as unknown as GuardedAnswer;
  if (!answer.guard_ok) {
    const last = reviveRow<ObservationRow>(answer.last_received);
    return last && collapses(last, input, receivedAt) ? { kind: 'existing', row: last } : { kind: 'decide' };
  }
  return storedOf(answer.id === null ? undefined : { ...answer, id: answer.id }, feedRow, receivedAt);
}

/** The ingest that needs a decision: two round trips, lock + read, then insert + COMMIT. */
async function storeDeciding(
  svc: Services,
  station: Station,
  input: ObservationInput,
  values: ObservationInsert,
  receivedAt: Date,
): Promise<Stored> {
  return pipelinedTransaction<Stored>(svc.db, async (tx) => {
    const context = ingestContextOf(await tx.send(ingestContextStatements(station.id)));
    if (!context) return { kind: 'gone' };
    const { lastReceived, latest } = context;
    // Nothing written: the transaction is rolled back.
    if (lastReceived && collapses(lastReceived, input, receivedAt)) return { kind: 'existing', row: lastReceived };
    // The new row is stored after every other one, so it is the latest unless the latest one describes a
    // later moment: then the now-playing row keeps showing that one, unchanged, and no event goes out
    // (the feed sends one event per change).
    if (latest && latest.sort_at.getTime() > values.sort_at.getTime()) {
      const [inserted] = await tx.commit([insertOnlyStatement(values)]);
      return storedOf(inserted[0] as unknown as ObservationRow | undefined, null, receivedAt);
    }
    const feedRow = nowPlayingRow(station, asShown(values), receivedAt);
    const [inserted] = await tx.commit([insertStatement(values, feedRow, receivedAt)]);
    return storedOf(inserted[0] as unknown as (ObservationRow & { feed_seq: number }) | undefined, feedRow, receivedAt);
  });
}

type ObservationInsert = Omit<ObservationRow, 'receipt_seq' | 'broadcast_id' | 'rundown_item_id' | 'score' | 'artwork_view'> & {
  artist_key: string | null;
  title_key: string | null;
  artwork_view: TrackArtView | null;
};
const INSERT_COLUMNS = [
  'id',
  'station_id',
  'event_id',
  'fingerprint',
  'artist',
  'title',
  'album',
  'duration_seconds',
  'artwork_url',
  'source_track_id',
  'isrc',
  'is_playing',
  'observed_at',
  'received_at',
  'sort_at',
  'outcome',
  'accepted',
  'followed_at',
  'credential_id',
  'artist_key',
  'title_key',
  'artwork_view',
] as const satisfies ReadonlyArray<keyof ObservationInsert>;

// Rule 1's unique constraint decides a retry (no row comes back).
const INSERT_OBSERVATION = `
  INSERT INTO observations (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})
  ON CONFLICT (station_id, event_id) DO NOTHING
  RETURNING *`;
const insertValues = (values: ObservationInsert): unknown[] =>
  INSERT_COLUMNS.map((column) =>
    column === 'artwork_view' ? (values.artwork_view === null ? null : JSON.stringify(values.artwork_view)) : values[column],
  );

// A stored observation bumps the station's feed seq and rewrites its `now-playing` row in the same
// statement (feed/rows.ts `feedRowCtes`) — one statement instead of three.
const INSERT_SQL = numbered(`
  WITH ins AS (${INSERT_OBSERVATION}), ${feedRowCtes('EXISTS (SELECT 1 FROM ins)')}
  SELECT ins.*, (SELECT seq FROM feed) AS feed_seq FROM ins`);

const INSERT_ONLY_SQL = numbered(INSERT_OBSERVATION);

function insertOnlyStatement(values: ObservationInsert): Statement {
  return { name: 'nowplaying_insert_observation_only', text: INSERT_ONLY_SQL, values: insertValues(values) };
}

function insertStatement(values: ObservationInsert, feedRow: FeedRowInput, now: Date): Statement {
  return { name: 'nowplaying_insert_observation', text: INSERT_SQL, values: [...insertValues(values), ...feedRowBindings(feedRow, now)] };
}

// The guarded insert of `storeUsually`. Its parameters are typed (an INSERT … SELECT does not take
// them from the columns). The later-moment check and `last` use the (station, sort_at, receipt_seq)
// and (station, receipt_seq) indexes. The collapse guard is wider than rule 3 (any pair without
// eventIds within the window, whatever the track): `collapses` decides exactly on what comes back.
const INSERT_TYPES: Record<(typeof INSERT_COLUMNS)[number], string> = {
  id: 'uuid',
  station_id: 'text',
  event_id: 'text',
  fingerprint: 'text',
  artist: 'text',
  title: 'text',
  album: 'text',
  duration_seconds: 'float8',
  artwork_url: 'text',
  source_track_id: 'text',
  isrc: 'text',
  is_playing: 'boolean',
  observed_at: 'timestamptz',
  received_at: 'timestamptz',
  sort_at: 'timestamptz',
  outcome: 'text',
  accepted: 'boolean',
  followed_at: 'timestamptz',
  credential_id: 'uuid',
  artist_key: 'text',
  title_key: 'text',
  artwork_view: 'jsonb',
};
const GUARDED_INSERT_SQL = numbered(`
  WITH last AS (
    SELECT * FROM observations WHERE station_id = ? ORDER BY receipt_seq DESC LIMIT 1
  ), guard AS (
    SELECT EXISTS (SELECT 1 FROM stations WHERE id = ?)
       AND NOT EXISTS (SELECT 1 FROM observations WHERE station_id = ? AND sort_at > ?::timestamptz)
       AND NOT EXISTS (SELECT 1 FROM last WHERE ?::text IS NULL AND last.event_id IS NULL AND last.received_at >= ?::timestamptz) AS ok
  ), ins AS (
    INSERT INTO observations (${INSERT_COLUMNS.join(', ')})
    SELECT ${INSERT_COLUMNS.map((column) => `?::${INSERT_TYPES[column]}`).join(', ')} FROM guard WHERE guard.ok
    ON CONFLICT (station_id, event_id) DO NOTHING
    RETURNING *
  ), ${feedRowCtes('EXISTS (SELECT 1 FROM ins)')}
  SELECT guard.ok AS guard_ok, CASE WHEN NOT guard.ok THEN (SELECT to_jsonb(last) FROM last) END AS last_received,
         ins.*, (SELECT seq FROM feed) AS feed_seq
  FROM guard LEFT JOIN ins ON true`);

/** With `guard_ok` false or a duplicate eventId, the observation's columns are null (nothing was inserted). */
type GuardedAnswer = Omit<ObservationRow, 'id'> & {
  id: string | null;
  guard_ok: boolean;
  last_received: Record<string, unknown> | null;
  feed_seq: number;
};

function guardedInsertStatement(values: ObservationInsert, feedRow: FeedRowInput, now: Date): Statement {
  const windowStart = new Date(values.received_at.getTime() - COLLAPSE_WINDOW_MS);
  return {
    name: 'nowplaying_insert_guarded',
    text: GUARDED_INSERT_SQL,
    values: [
      values.station_id,
      values.station_id,
      values.station_id,
      values.sort_at,
      values.event_id,
      windowStart,
      ...insertValues(values),
      ...feedRowBindings(feedRow, now),
    ],
  };
}

/**
 * Starts or joins rundown following of an observation and waits for it until `deadline`. The job id is
 * the observation id, so a retry that arrives before the original request enqueued the job adds the
 * same job, and every waiter hears the one result. A waiter that joins late asks the stored row, in
 * case the job finished before it began listening.
 */
async function follow(svc: Services, stationId: string, observationId: string, deadline: number, isNew: boolean): Promise<IngestResult> {
  const followedBefore = async (): Promise<IngestResult | undefined> => {
    const row = await observationById(svc.db, observationId);
    return row && row.followed_at !== null ? resultOf(row) : undefined;
  };
  try {
    const value = await svc.jobs.run(
      'nowPlaying.follow',
      { observationId, stationId },
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
