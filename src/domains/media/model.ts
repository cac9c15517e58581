// Media assets, versions and their stored files (docs/media.md#published-media-bytes,
// docs/media.md#upload and docs/media.md#variants).

/** The renditions of an image version, by name (the published media item's `variants`). */
export const MEDIA_VARIANTS = ['thumb', 'display', 'card', 'square'] as const;
export type MediaVariant = (typeof MEDIA_VARIANTS)[number];

/** Largest upload accepted (at most 50 MiB: docs/media.md#upload). */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

export const MEDIA_KINDS = ['image', 'audio', 'video', 'file'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** The kind follows the top-level type of the declared mime. */
export function kindOf(mime: string): MediaKind {
  const top = mime.slice(0, mime.indexOf('/'));
  return top === 'image' || top === 'audio' || top === 'video' ? top : 'file';
}

/** Square JPEG renditions of artwork and show images, by side in px (docs/now-playing.md#what-an-app-shows-for-each-source). */
export const SQUARE_VARIANTS = ['300', '600', '1200'] as const;
export type SquareVariant = (typeof SQUARE_VARIANTS)[number];
export const SQUARE_MIME = 'image/jpeg';

/** A stored file: the upload (`original`) or one rendition. */
export type FileVariant = 'original' | MediaVariant | SquareVariant;

/**
 * How each rendition is made. `width`: resized to that width, aspect kept, never upscaled.
 * `crop`: exactly width × height, cropped around the focal point.
 */
export type VariantSpec =
  { variant: MediaVariant; mode: 'width'; width: number } | { variant: MediaVariant; mode: 'crop'; width: number; height: number };

export const VARIANT_SPECS: readonly VariantSpec[] = [
  { variant: 'thumb', mode: 'width', width: 320 },
  { variant: 'display', mode: 'width', width: 1280 },
  { variant: 'card', mode: 'crop', width: 1280, height: 720 },
  { variant: 'square', mode: 'crop', width: 640, height: 640 },
];

export const RENDITION_MIME = 'image/webp';

export interface FocalPoint {
  /** 0 (left) … 1 (right) */
  x: number;
  /** 0 (top) … 1 (bottom) */
  y: number;
}

export const CENTRE: FocalPoint = Object.freeze({ x: 0.5, y: 0.5 });

export interface MediaAssetRow {
  id: string;
  station_id: string;
  kind: string;
  focal_x: number;
  focal_y: number;
  created_at: Date;
}

/** ETag of stored bytes: `"` + lowercase hex SHA-256 + `"` (the same form as JSON ETags). */
export const etagOf = (sha256Hex: string): string => `"${sha256Hex}"`;
