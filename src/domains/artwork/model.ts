// Artwork you can trust (docs/now-playing.md#the-checks-worker-queue-artwork): the checks' limits, the
// reasons a source is refused, and the forms stored in the artwork tables
// (migrations/20261213020000_artwork.ts).

/** Why a fetched (or uploaded) image is not shown, exactly as the review route lists them. */
export const REJECT_REASONS = [
  'unreachable',
  'too-small',
  'not-square',
  'not-an-image',
  'too-large',
  'blocked',
  'forbidden-address',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** Reasons that mean "Waveline could not fetch it": the reported URL then stays the `artworkUrl`. */
export const UNFETCHED: ReadonlySet<RejectReason> = new Set(['unreachable', 'forbidden-address']);

/** Track-art sources that are checked (the fallbacks are the operator's own uploads, shown as they are). */
export type CheckedSource = 'operator' | 'ingest' | 'catalogue';

/** Fetch limits of a check: the outbound rules (lib/boundedFetch.ts) with an image's budget. */
export const FETCH_MAX_BYTES = 10 * 1024 * 1024;
export const FETCH_TIMEOUT_MS = 10_000;
export const FETCH_MAX_REDIRECTS = 3;
/**
 * Largest image decoded (sharp's `limitInputPixels`): 25 megapixels (5000 × 5000). A decompression
 * bomb declares more and is refused from its header, before anything is decoded.
 */
export const MAX_INPUT_PIXELS = 25_000_000;
/** Checks running at once in one worker process (each may hold one fetched body of ≤ 10 MiB). */
export const CHECK_CONCURRENCY = 8;
/** sharp decodes running at once in one worker process (each bounded by MAX_INPUT_PIXELS). */
export const DECODE_CONCURRENCY = 2;
/** A failed check is remembered this long; the URL is not fetched again meanwhile. */
export const FAILURE_MEMORY_MS = 24 * 3600 * 1000;
/** Aspect ratio (width / height) a cover may have. */
export const MIN_ASPECT = 0.8;
export const MAX_ASPECT = 1.25;
/** dHash distance at or under which two images are the same picture. */
export const SAME_PICTURE_DISTANCE = 6;

/** The station's `artwork` setting (docs/now-playing.md#the-artwork-setting-and-the-admin-routes): stored in stations.artwork. */
export interface ArtworkSetting {
  minSize: number;
  fallback: boolean;
  stationImageVersionId: string | null;
}
export const ARTWORK_DEFAULTS: ArtworkSetting = Object.freeze({ minSize: 300, fallback: true, stationImageVersionId: null });
export const MIN_SIZE_RANGE = { minimum: 100, maximum: 1400 } as const;

export interface ArtworkImageRow {
  id: string;
  station_id: string;
  sha256: string;
  version_id: string;
  width: number;
  height: number;
  dhash: string;
  created_at: Date;
}

export interface ArtworkCheckRow {
  station_id: string;
  url_hash: string;
  url: string;
  source: CheckedSource;
  status: 'kept' | 'rejected';
  reason: RejectReason | null;
  image_id: string | null;
  checked_at: Date;
  expires_at: Date | null;
}

export interface ArtworkPinRow {
  station_id: string;
  id: string;
  match_artist: string;
  match_title: string | null;
  artist_key: string;
  title_key: string | null;
  image_kind: 'version' | 'url' | 'none';
  image_version_id: string | null;
  image_url: string | null;
  status: 'pending' | 'kept' | 'rejected';
  reason: RejectReason | null;
  image_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ArtworkBlockRow {
  id: string;
  station_id: string;
  hash: string;
  url: string | null;
  version_id: string | null;
  created_at: Date;
}
