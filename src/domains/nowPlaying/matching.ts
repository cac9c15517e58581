import { distance } from 'fastest-levenshtein';

// Rundown matching (decisions.md, Ingest rule 8): normalised artist/title similarity, case, accents,
// punctuation, `feat.` parts and bracketed suffixes ignored; ties broken by planned-slot nearness.

export const MATCHED_AT = 0.9;
export const UNCERTAIN_AT = 0.6;
/** The title says which track it is; the artist confirms it. A cover of the planned song stays `uncertain`. */
const TITLE_WEIGHT = 0.6;
const ARTIST_WEIGHT = 0.4;
const TIE = 1e-9;

const BRACKETED = /[([{][^)\]}]*[)\]}]/gu;
const FEATURING = /(^|\s)(feat\.?|ft\.?|featuring)\s.*$/u;

// Rundown items are compared with every observation of their broadcast: their normal forms are kept.
const normalised = new Map<string, string>();
const NORMALISED_MAX = 20_000;

/** Lower case, accents and punctuation gone, `(Radio Edit)`/`[Live]` and `feat. X` parts dropped. */
export function normalise(text: string): string {
  let hit = normalised.get(text);
  if (hit === undefined) {
    hit = normaliseUncached(text);
    if (normalised.size >= NORMALISED_MAX) normalised.clear();
    normalised.set(text, hit);
  }
  return hit;
}

function normaliseUncached(text: string): string {
  const plain = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  const words = (s: string) => s.replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
  const stripped = words(plain.replace(BRACKETED, ' ').replace(FEATURING, ' '));
  // A title that is nothing but brackets, "(Intro)", is still compared by its words.
  return stripped || words(plain);
}

/** 1 for equal strings, falling with the edit distance relative to the longer one. */
export function similarity(a: string, b: string): number {
  if (a === b) return a === '' ? 0 : 1;
  const longest = Math.max(a.length, b.length);
  return longest === 0 ? 0 : 1 - distance(a, b) / longest;
}

export interface Track {
  artist: string | null;
  title: string;
}

/** Similarity of an observed track to a planned one, 0..1. */
export function score(observed: Track, planned: Track): number {
  const title = similarity(normalise(observed.title), normalise(planned.title));
  if (observed.artist && planned.artist) {
    return TITLE_WEIGHT * title + ARTIST_WEIGHT * similarity(normalise(observed.artist), normalise(planned.artist));
  }
  if (!observed.artist && planned.artist) {
    // A stream title without the ` - ` separator may still carry both: "Artist Title".
    const both = similarity(normalise(observed.title), `${normalise(planned.artist)} ${normalise(planned.title)}`);
    return Math.max(title, both);
  }
  return title;
}

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
