import sharp, { type Metadata } from 'sharp';
import { ConcurrencyLimit } from '../../lib/concurrencyLimit.ts';
import { dhashOfPixels, hammingDistance } from './dhash.ts';
import { squareRenditionsOf, type Rendition } from '../media/render.ts';
import { DECODE_CONCURRENCY, MAX_ASPECT, MAX_INPUT_PIXELS, MIN_ASPECT, SAME_PICTURE_DISTANCE, type RejectReason } from './model.ts';

// The checks of an image's bytes (docs/now-playing.md#the-checks-worker-queue-artwork), in the order listed there:
// sharp decodes it as JPEG, PNG, WebP or AVIF; its short side is at least `minSize`; its aspect ratio
// is between 0.8 and 1.25; its dHash is not within distance 6 of the station logo or a blocked image.

export type Verdict =
  | { ok: true; width: number; height: number; dhash: string; format: string; renditions: Rendition[] | null }
  | { ok: false; reason: RejectReason; detail: string };

/** Decodes run at most this many at a time in a process: each may hold up to MAX_INPUT_PIXELS. */
const decodes = new ConcurrencyLimit(DECODE_CONCURRENCY);

function formatAllowed(meta: Metadata): boolean {
  if (meta.format === 'jpeg' || meta.format === 'png' || meta.format === 'webp') return true;
  // HEIF container: AVIF (AV1) only, not HEIC.
  return meta.format === 'heif' && meta.compression === 'av1';
}

/**
 * Checks an image; when it passes and `render` is asked, also its square renditions. The picture is
 * decoded once, to raw pixels (at most MAX_INPUT_PIXELS × 3 bytes), and the hash and the renditions
 * are made from those.
 */
export async function inspectImage(bytes: Buffer, minSize: number, blockedHashes: readonly string[], render = false): Promise<Verdict> {
  return decodes.run(async () => {
    let meta: Metadata;
    try {
      meta = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    } catch (err) {
      const message = (err as Error).message;
      // sharp refuses a header declaring more than the pixel limit: a decompression bomb.
      return { ok: false, reason: /pixel limit/i.test(message) ? 'too-large' : 'not-an-image', detail: message };
    }
    if (!formatAllowed(meta)) return { ok: false, reason: 'not-an-image', detail: `format ${meta.format ?? 'unknown'}` };
    const width = meta.autoOrient?.width ?? meta.width ?? 0;
    const height = meta.autoOrient?.height ?? meta.height ?? 0;
    if (!width || !height) return { ok: false, reason: 'not-an-image', detail: 'no dimensions' };
    // The header alone tells a decompression bomb: nothing is decoded.
    if (width * height > MAX_INPUT_PIXELS) return { ok: false, reason: 'too-large', detail: `${width}×${height} px` };
    if (Math.min(width, height) < minSize) return { ok: false, reason: 'too-small', detail: `${width}×${height} px, minimum ${minSize}` };
    const aspect = width / height;
    if (aspect < MIN_ASPECT || aspect > MAX_ASPECT) return { ok: false, reason: 'not-square', detail: `${width}×${height} px` };
    let pixels: { data: Buffer; info: { width: number; height: number; channels: 1 | 2 | 3 | 4 } };
    try {
      pixels = await sharp(bytes, { autoOrient: true, limitInputPixels: MAX_INPUT_PIXELS })
        .flatten({ background: '#ffffff' })
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
    } catch (err) {
      const message = (err as Error).message;
      return { ok: false, reason: /pixel limit/i.test(message) ? 'too-large' : 'not-an-image', detail: message };
    }
    const raw = { width: pixels.info.width, height: pixels.info.height, channels: pixels.info.channels };
    const dhash = await dhashOfPixels(pixels.data, raw);
    const near = blockedHashes.find((blocked) => hammingDistance(blocked, dhash) <= SAME_PICTURE_DISTANCE);
    if (near) return { ok: false, reason: 'blocked', detail: `same picture as ${near}` };
    const renditions = render ? await squareRenditionsOf(pixels.data, raw) : null;
    return { ok: true, width, height, dhash, format: meta.format as string, renditions };
  });
}
