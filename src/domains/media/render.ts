import sharp from 'sharp';
import {
  RENDITION_MIME,
  SQUARE_MIME,
  SQUARE_VARIANTS,
  VARIANT_SPECS,
  type SquareVariant,
  type FocalPoint,
  type MediaVariant,
  type VariantSpec,
} from './model.ts';

// Image renditions (docs/media.md#variants): thumb and display resized to a width (never upscaled, aspect
// kept); card and square cut to their exact size around the focal point. All WebP. Pure: bytes in,
// bytes out — the worker job stores them.

export interface Rendition {
  variant: MediaVariant | SquareVariant;
  mime: string;
  width: number;
  height: number;
  bytes: Buffer;
}

export interface CropBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

const clamp = (value: number, min: number, max: number): number => Math.min(max, Math.max(min, value));

/**
 * The largest region of the source with the target's aspect ratio, centred on the focal point and
 * moved back inside the picture where it would overhang an edge.
 */
export function cropBox(source: { width: number; height: number }, target: { width: number; height: number }, focal: FocalPoint): CropBox {
  const scale = Math.max(target.width / source.width, target.height / source.height);
  const width = clamp(Math.round(target.width / scale), 1, source.width);
  const height = clamp(Math.round(target.height / scale), 1, source.height);
  const left = clamp(Math.round(focal.x * source.width - width / 2), 0, source.width - width);
  const top = clamp(Math.round(focal.y * source.height - height / 2), 0, source.height - height);
  return { left, top, width, height };
}

// Renditions show the picture upright (EXIF orientation applied) and its first frame when animated.
const load = (original: Buffer) => sharp(original, { autoOrient: true });

async function render(original: Buffer, size: { width: number; height: number }, spec: VariantSpec, focal: FocalPoint): Promise<Rendition> {
  const pipeline =
    spec.mode === 'width'
      ? load(original).resize({ width: spec.width, withoutEnlargement: true })
      : load(original)
          .extract(cropBox(size, spec, focal))
          .resize(spec.width, spec.height, { fit: 'fill' });
  const { data, info } = await pipeline.webp({ quality: 82 }).toBuffer({ resolveWithObject: true });
  return { variant: spec.variant, mime: RENDITION_MIME, width: info.width, height: info.height, bytes: data };
}

/** Every variant of an image, one after another (the media queue already bounds how many run at once). */
export async function renderVariants(original: Buffer, focal: FocalPoint): Promise<Rendition[]> {
  const meta = await load(original).metadata();
  const size = { width: meta.autoOrient?.width ?? meta.width ?? 0, height: meta.autoOrient?.height ?? meta.height ?? 0 };
  if (!size.width || !size.height) throw new Error('image has no dimensions');
  const renditions: Rendition[] = [];
  for (const spec of VARIANT_SPECS) renditions.push(await render(original, size, spec, focal));
  return renditions;
}

/**
 * The square renditions 300 / 600 / 1200 (JPEG, cover crop by sharp's attention strategy), never
 * upscaled: a side larger than the image's short side is that side's square. `limitInputPixels`
 * refuses a decompression bomb before it is decoded.
 */
export async function renderSquareVariants(original: Buffer, limitInputPixels: number | false = false): Promise<Rendition[]> {
  const meta = await sharp(original, { autoOrient: true, limitInputPixels }).metadata();
  const shortSide = Math.min(meta.autoOrient?.width ?? meta.width ?? 0, meta.autoOrient?.height ?? meta.height ?? 0);
  if (!shortSide) throw new Error('image has no dimensions');
  return Promise.all(
    SQUARE_VARIANTS.map(async (variant) => {
      const side = Math.min(Number(variant), shortSide);
      const { data, info } = await sharp(original, { autoOrient: true, limitInputPixels })
        .resize(side, side, { fit: 'cover', position: sharp.strategy.attention })
        .flatten({ background: '#ffffff' })
        .jpeg({ quality: 85, mozjpeg: false })
        .toBuffer({ resolveWithObject: true });
      return { variant, mime: SQUARE_MIME, width: info.width, height: info.height, bytes: data };
    }),
  );
}

/** The square renditions of decoded pixels (the same as `renderSquareVariants`, without decoding again). */
export async function squareRenditionsOf(
  data: Buffer,
  raw: { width: number; height: number; channels: 1 | 2 | 3 | 4 },
): Promise<Rendition[]> {
  const shortSide = Math.min(raw.width, raw.height);
  return Promise.all(
    SQUARE_VARIANTS.map(async (variant) => {
      const side = Math.min(Number(variant), shortSide);
      const { data: bytes, info } = await sharp(data, { raw, limitInputPixels: false })
        .resize(side, side, { fit: 'cover', position: sharp.strategy.attention })
        .jpeg({ quality: 85 })
        .toBuffer({ resolveWithObject: true });
      return { variant, mime: SQUARE_MIME, width: info.width, height: info.height, bytes };
    }),
  );
}
