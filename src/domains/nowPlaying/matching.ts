import { score, type Track } from '../../lib/trackMatch.ts';

// Rundown matching (docs/now-playing.md#matching): normalised artist/title similarity, case, accents,
// punctuation, `feat.` parts and bracketed suffixes ignored; ties broken by planned-slot nearness.

export const MATCHED_AT = 0.9;
export const UNCERTAIN_AT = 0.6;
const TIE = 1e-9;

export interface PlannedItem extends Track {
  id: string;
  /** Planned slot in Unix milliseconds. */
  plannedStartsMs: number;
  plannedEndsMs: number | null;
}

/** How far `at` lies from the item's planned slot (0 inside it). */
function slotDistance(item: PlannedItem, at: number): number {
  const start = item.plannedStartsMs;
  const end = item.plannedEndsMs;
  if (end === null) return Math.abs(at - start);
  if (at < start) return start - at;
  if (at > end) return at - end;
  return 0;
}

export interface BestMatch {
  item: PlannedItem;
  score: number;
}

/** The best-scoring item; among equal scores the one planned nearest to `at` (Unix ms). */
export function bestItem(observed: Track, items: PlannedItem[], at: number): BestMatch | null {
  let best: BestMatch | null = null;
  let bestDistance = Infinity;
  for (const item of items) {
    const s = score(observed, item);
    const d = slotDistance(item, at);
    if (!best || s > best.score + TIE || (Math.abs(s - best.score) <= TIE && d < bestDistance)) {
      best = { item, score: s };
      bestDistance = d;
    }
  }
  return best;
}

export type MatchOutcome = 'matched' | 'uncertain' | 'ignored';

export const outcomeFor = (s: number): MatchOutcome =>
  s >= MATCHED_AT - TIE ? 'matched' : s >= UNCERTAIN_AT - TIE ? 'uncertain' : 'ignored';
