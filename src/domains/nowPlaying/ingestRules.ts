import { COLLAPSE_WINDOW_MS, MAX_FUTURE_MS, OUTCOMES, type IngestResult, type ObservationInput, type ObservationRow } from './model.ts';

// The ingest's outcome rules that need no storage (docs/now-playing.md#ingest-web): the answers, rule 2
// (too far ahead), rule 3 (a collapsed repeat), and what a stored observation or a job answers.

export const REJECTED: IngestResult = { accepted: false, outcome: 'rejected' };
export const RECORDED: IngestResult = { accepted: true, outcome: 'recorded' };

/** Rule 2: observedAt more than 300 s ahead of the server clock. */
export const tooFarAhead = (input: ObservationInput, receivedAt: Date): boolean =>
  input.observedAt !== null && input.observedAt.getTime() - receivedAt.getTime() > MAX_FUTURE_MS;

const sameTrack = (row: ObservationRow, input: ObservationInput): boolean =>
  row.artist === input.artist && row.title === input.title && row.album === input.album && row.is_playing === input.isPlaying;

/** Rule 3: no eventId on either side, the same track and play state, received less than 30 s apart. */
export function collapses(previous: ObservationRow, input: ObservationInput, receivedAt: Date): boolean {
  return (
    input.eventId === null &&
    previous.event_id === null &&
    sameTrack(previous, input) &&
    receivedAt.getTime() - previous.received_at.getTime() < COLLAPSE_WINDOW_MS
  );
}

export const resultOf = (row: Pick<ObservationRow, 'accepted' | 'outcome'>): IngestResult => ({
  accepted: row.accepted,
  outcome: row.outcome,
});

export function isResult(value: unknown): value is IngestResult {
  const v = value as Partial<IngestResult> | null;
  return !!v && typeof v.accepted === 'boolean' && (OUTCOMES as readonly string[]).includes(v.outcome as string);
}
