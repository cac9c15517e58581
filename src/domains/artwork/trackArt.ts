import type { SquareVariant } from '../media/model.ts';

// A track's art as listeners see it (docs/now-playing.md#artwork-you-can-trust): where it came from,
// the stored view the source chain resolved (resolve.ts), and what a track shows before that.

/** Where a track's art came from. */
export const ARTWORK_SOURCES = ['operator', 'ingest', 'catalogue', 'program', 'presenter', 'station'] as const;
export type ArtworkSource = (typeof ARTWORK_SOURCES)[number];

/** The `artwork` object of a track: absolute URLs. */
export interface TrackArtwork {
  url: string;
  source: ArtworkSource;
  width: number | null;
  height: number | null;
  variants: Record<SquareVariant, string>;
}

/**
 * The resolved art of an observation, stored with it when resolved (listener reads only present it):
 * `artworkUrl` null means none; `imageId` is the kept image shown (never presented).
 */
export interface TrackArtView {
  artworkUrl: string | null;
  artwork: TrackArtwork | null;
  imageId?: string | null;
}

/** The art columns of a stored observation. */
export interface StoredArt {
  artwork_url: string | null;
  /** What the catalogue look-up found (the ingest's own URL stays in artwork_url). */
  catalogue_url?: string | null;
  /** The resolved art (resolve.ts); null until resolved. */
  artwork_view?: TrackArtView | null;
}

/** Only HTTPS artwork reaches listeners (an `https:` `artworkUrl` only: docs/now-playing.md#body-fields). */
export function isHttpsUrl(value: string | null | undefined): value is string {
  if (!value) return false;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * `artworkUrl` and `artwork` of a track: as resolved, or while it is not resolved yet the reported URL
 * (the ingest's, else the catalogue's) and no `artwork`.
 */
export function artFields(row: StoredArt): { artworkUrl?: string; artwork: TrackArtwork | null } {
  const view = row.artwork_view;
  if (view) return { ...(view.artworkUrl ? { artworkUrl: view.artworkUrl } : {}), artwork: view.artwork };
  const reported = isHttpsUrl(row.artwork_url) ? row.artwork_url : isHttpsUrl(row.catalogue_url) ? row.catalogue_url : null;
  return { ...(reported ? { artworkUrl: reported } : {}), artwork: null };
}
