import type { FeedMessage } from '../../feed/bus.ts';
import { feedMessage, type FeedRowInput } from '../../feed/rows.ts';
import { pipelinedTransaction } from '../../lib/pipeline.ts';
import type { Services } from '../../services.ts';
import { lockStationStatement } from '../stations/lock.ts';
import type { Station } from '../stations/model.ts';
import { nowPlayingRow } from './feed.ts';
import { collapses } from './ingestRules.ts';
import type { ObservationInput, ObservationRow, TrackRow } from './model.ts';
import { ingestContextOf, ingestContextStatements, reviveRow } from './queries.ts';
import { guardedInsertStatement, insertOnlyStatement, insertStatement, type GuardedAnswer, type ObservationInsert } from './storeSql.ts';

// Storing an observation under the station's row lock (rules 1–5 of the ingest, docs/now-playing.md#ingest-web),
// two ways: the usual one in one round trip, and the deciding one in two when the usual one's guard
// holds back. Each writes the observation and the `now-playing` row showing it in one transaction.

export type Stored =
  /** `message` is null when the now-playing row did not change (a late observation of an earlier moment). */
  | { kind: 'stored'; row: ObservationRow; message: FeedMessage | null }
  | { kind: 'existing'; row: ObservationRow }
  | { kind: 'conflict' }
  | { kind: 'duplicate' }
  | { kind: 'gone' };

/** Stores an observation the usual way, and the deciding way when that one holds back. */
export async function storeObservation(
  svc: Services,
  station: Station,
  input: ObservationInput,
  values: ObservationInsert,
  receivedAt: Date,
): Promise<Stored> {
  const usual = await storeUsually(svc, station, input, values, receivedAt);
  return usual.kind === 'decide' ? storeDeciding(svc, station, input, values, receivedAt) : usual;
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
