import { distance } from 'fastest-levenshtein';

// Two tracks compared by artist and title (docs/now-playing.md#rundown-following-worker): normal forms
// without case, accents, punctuation, `feat.` parts and bracketed suffixes; a similarity of 0..1. Rundown
// following matches observations to planned items with it, the catalogue look-up its search results.

/** The title says which track it is; the artist confirms it. A cover of the planned song stays `uncertain`. */
const TITLE_WEIGHT = 0.6;
const ARTIST_WEIGHT = 0.4;

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

/** Similarity of an observed track to a planned (or catalogued) one, 0..1. */
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
