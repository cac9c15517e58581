import sharp, { type Metadata } from 'sharp';
import { UnsupportedMediaTypeError, ValidationError } from '../../lib/errors.ts';
import { audioDuration } from './audio.ts';
import { kindOf, type MediaKind } from './model.ts';

// What the upload route learns from the bytes before storing them: image dimensions (and that the
// bytes really are the declared image type), audio duration (audio.ts).

/** Image types sharp decodes here, with the format (and compression) its metadata reports for them. */
const IMAGE_FORMATS: Record<string, { format: string; compression?: string }> = {
  'image/jpeg': { format: 'jpeg' },
  'image/png': { format: 'png' },
  'image/webp': { format: 'webp' },
  'image/gif': { format: 'gif' },
  'image/avif': { format: 'heif', compression: 'av1' },
  'image/tiff': { format: 'tiff' },
  'image/svg+xml': { format: 'svg' },
};

export const SUPPORTED_IMAGE_TYPES = Object.keys(IMAGE_FORMATS);

export interface Inspection {
  kind: MediaKind;
  width: number | null;
  height: number | null;
  duration: number | null;
}

function notDecodable(mime: string, detail: string): ValidationError {
  return new ValidationError(`The body does not decode as ${mime}.`, [
    { path: 'body', code: 'invalid_image', message: `body is not a valid ${mime} image (${detail})` },
  ]);
}

async function inspectImage(mime: string, bytes: Buffer): Promise<{ width: number; height: number }> {
  const expected = IMAGE_FORMATS[mime];
  if (!expected) throw new UnsupportedMediaTypeError(`${mime} images are not supported; send one of ${SUPPORTED_IMAGE_TYPES.join(', ')}.`);
  let meta: Metadata;
  try {
    meta = await sharp(bytes).metadata();
  } catch {
    throw notDecodable(mime, 'not an image sharp can read');
  }
  const found = meta.format === 'heif' ? `heif/${meta.compression}` : meta.format;
  if (meta.format !== expected.format || (expected.compression && meta.compression !== expected.compression))
    throw notDecodable(mime, `found ${found}`);
  // The header alone can be intact on a truncated or corrupt file: decode it, shrunk on load where
  // the format allows (JPEG, WebP), so the worker never meets bytes it cannot render.
  try {
    await sharp(bytes).resize(16, 16, { fit: 'inside' }).raw().toBuffer();
  } catch (err) {
    throw notDecodable(mime, err instanceof Error ? err.message.split('\n')[0] : 'decoding failed');
  }
  // Listeners see the picture upright: EXIF orientation applied.
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  if (!width || !height) throw notDecodable(mime, 'no dimensions');
  return { width, height };
}

export async function inspectUpload(mime: string, bytes: Buffer): Promise<Inspection> {
  const kind = kindOf(mime);
  if (kind === 'image') return { kind, ...(await inspectImage(mime, bytes)), duration: null };
  if (kind === 'audio') return { kind, width: null, height: null, duration: await audioDuration(bytes, mime) };
  return { kind, width: null, height: null, duration: null };
}
