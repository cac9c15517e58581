import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import type { TrackArtView } from '../artwork/trackArt.ts';

// What a feature decides of a track's art before the ingest stores it, so the first `now-playing` frame
// already shows it. The artwork feature registers the one decider (src/domains/artwork/pinCache.ts): an
// operator's pin of the track's artist or title wins at once, not one follow-up frame later. Ingest is a
// hot path: a decider answers from memory, and a promise only while it loads a station's first answer.

export interface IngestArt {
  /** The track's art as listeners see it; null: not decided here (the worker resolves it afterwards). */
  view: TrackArtView | null;
  /** The match forms of the artist and title, stored with the observation (null without one). */
  artistKey: string | null;
  titleKey: string | null;
}

export type IngestArtDecider = (
  svc: Services,
  station: Pick<Station, 'id'>,
  track: { artist: string | null; title: string | null },
) => IngestArt | Promise<IngestArt>;

const NOTHING: IngestArt = Object.freeze({ view: null, artistKey: null, titleKey: null });
let decider: IngestArtDecider | null = null;

/** Registers the decider (one: a second registration replaces the first). */
export function registerIngestArt(decide: IngestArtDecider): void {
  decider = decide;
}

/** The decided art of a track about to be stored; nothing decided without a registered decider. */
export function ingestArtOf(
  svc: Services,
  station: Pick<Station, 'id'>,
  track: { artist: string | null; title: string | null },
): IngestArt | Promise<IngestArt> {
  return decider ? decider(svc, station, track) : NOTHING;
}
