import sharp, { type Sharp } from 'sharp';
import { MAX_INPUT_PIXELS } from './model.ts';

// The 64-bit difference hash (dHash): the picture shrunk to 9 × 8 grey pixels, one bit per pair of
// neighbours in a row (left brighter than right). Re-encoding, resizing and small edits move few bits;
// another picture differs in about half of them.

/** dHash of an image as 16 hex digits. */
export async function dhashOf(bytes: Buffer): Promise<string> {
  return hashOf(sharp(bytes, { autoOrient: true, limitInputPixels: MAX_INPUT_PIXELS }).flatten({ background: '#ffffff' }));
}

/** dHash of decoded pixels (an image already decoded for its other uses). */
export function dhashOfPixels(data: Buffer, raw: { width: number; height: number; channels: 1 | 2 | 3 | 4 }): Promise<string> {
  return hashOf(sharp(data, { raw, limitInputPixels: false }));
}

async function hashOf(image: Sharp): Promise<string> {
  const pixels = await image.greyscale().resize(9, 8, { fit: 'fill', kernel: 'lanczos3' }).raw().toBuffer();
  let hash = 0n;
  for (let y = 0; y < 8; y++) {
    for (let x = 0; x < 8; x++) hash = (hash << 1n) | (pixels[y * 9 + x] > pixels[y * 9 + x + 1] ? 1n : 0n);
  }
  return hash.toString(16).padStart(16, '0');
}

/** Bits in which two hashes differ. */
export function hammingDistance(a: string, b: string): number {
  let diff = BigInt(`0x${a}`) ^ BigInt(`0x${b}`);
  let count = 0;
  while (diff) {
    count += Number(diff & 1n);
    diff >>= 1n;
  }
  return count;
}
