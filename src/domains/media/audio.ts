// Audio duration from the container headers, for the formats where that is cheap and exact enough:
// WAV (data size / byte rate), FLAC (STREAMINFO total samples), MP3 (Xing/Info or VBRI frame count,
// else a constant-bitrate estimate from the first frame). Anything else gives null.

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

export function audioDuration(bytes: Buffer): number | null {
  try {
    const seconds = wavDuration(bytes) ?? flacDuration(bytes) ?? mp3Duration(bytes);
    return seconds !== null && Number.isFinite(seconds) && seconds > 0 ? round(seconds) : null;
  } catch {
    return null; // a header that lies about its lengths: unknown duration, not a failed upload
  }
}

function wavDuration(b: Buffer): number | null {
  if (b.length < 12 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') return null;
  let byteRate = 0;
  for (let at = 12; at + 8 <= b.length; ) {
    const id = b.toString('latin1', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 16 <= b.length) byteRate = b.readUInt32LE(at + 16);
    if (id === 'data') {
      if (!byteRate) return null;
      // A streamed WAV may carry a placeholder size: count what is actually there.
      return Math.min(size, b.length - at - 8) / byteRate;
    }
    at += 8 + size + (size % 2);
  }
  return null;
}

function flacDuration(b: Buffer): number | null {
  // "fLaC", then the STREAMINFO block: 4-byte block header, 10 bytes of sizes, then
  // 20 bits sample rate | 3 bits channels | 5 bits bits-per-sample | 36 bits total samples.
  if (b.length < 42 || b.toString('latin1', 0, 4) !== 'fLaC' || (b[4] & 0x7f) !== 0) return null;
  const d = 8;
  const sampleRate = (b[d + 10] << 12) | (b[d + 11] << 4) | (b[d + 12] >> 4);
  const totalSamples = (b[d + 13] & 0x0f) * 2 ** 32 + b.readUInt32BE(d + 14);
  return sampleRate && totalSamples ? totalSamples / sampleRate : null;
}

const MPEG_BITRATES: Record<string, number[]> = {
  // kbit/s by bitrate index, for [MPEG version 1 | 2 and 2.5] × [layer I, II, III]
  '1-1': [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  '1-2': [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  '1-3': [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  '2-1': [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  '2-2': [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  '2-3': [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const MPEG_SAMPLE_RATES: Record<number, number[]> = { 1: [44100, 48000, 32000], 2: [22050, 24000, 16000], 2.5: [11025, 12000, 8000] };

interface MpegFrame {
  version: 1 | 2 | 2.5;
  layer: 1 | 2 | 3;
  bitrate: number;
  sampleRate: number;
  samples: number;
  length: number;
  mono: boolean;
}

function mpegFrame(b: Buffer, at: number): MpegFrame | null {
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1] & 0xe0) !== 0xe0) return null;
  const versionBits = (b[at + 1] >> 3) & 3;
  const layerBits = (b[at + 1] >> 1) & 3;
  const bitrateIndex = b[at + 2] >> 4;
  const rateIndex = (b[at + 2] >> 2) & 3;
  if (versionBits === 1 || layerBits === 0 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const version = versionBits === 3 ? 1 : versionBits === 2 ? 2 : 2.5;
  const layer = (4 - layerBits) as 1 | 2 | 3;
  const bitrate = MPEG_BITRATES[`${version === 1 ? 1 : 2}-${layer}`][bitrateIndex] * 1000;
  const sampleRate = MPEG_SAMPLE_RATES[version][rateIndex];
  const padding = (b[at + 2] >> 1) & 1;
  const samples = layer === 1 ? 384 : layer === 3 && version !== 1 ? 576 : 1152;
  const length = layer === 1 ? Math.floor((12 * bitrate) / sampleRate + padding) * 4 : Math.floor((samples / 8) * bitrate / sampleRate) + padding;
  return { version, layer, bitrate, sampleRate, samples, length, mono: (b[at + 3] >> 6) === 3 };
}

function mp3Duration(b: Buffer): number | null {
  let start = 0;
  if (b.toString('latin1', 0, 3) === 'ID3' && b.length >= 10) {
    const size = ((b[6] & 0x7f) << 21) | ((b[7] & 0x7f) << 14) | ((b[8] & 0x7f) << 7) | (b[9] & 0x7f);
    start = 10 + size + (b[5] & 0x10 ? 10 : 0);
  }
  // The first frame whose successor is where its length says (two in a row rule out a stray 0xFFE).
  let frame: MpegFrame | null = null;
  const searchEnd = Math.min(b.length, start + 64 * 1024);
  for (; start < searchEnd; start++) {
    frame = mpegFrame(b, start);
    if (frame && (start + frame.length >= b.length || mpegFrame(b, start + frame.length))) break;
    frame = null;
  }
  if (!frame) return null;
  // Xing/Info sits after the side information; VBRI 32 bytes after the header.
  const side = frame.version === 1 ? (frame.mono ? 17 : 32) : frame.mono ? 9 : 17;
  const xing = start + 4 + side;
  const tag = b.toString('latin1', xing, xing + 4);
  if ((tag === 'Xing' || tag === 'Info') && xing + 12 <= b.length && b.readUInt32BE(xing + 4) & 1) {
    return (b.readUInt32BE(xing + 8) * frame.samples) / frame.sampleRate;
  }
  const vbri = start + 4 + 32;
  if (b.toString('latin1', vbri, vbri + 4) === 'VBRI' && vbri + 18 <= b.length) {
    return (b.readUInt32BE(vbri + 14) * frame.samples) / frame.sampleRate;
  }
  const id3v1 = b.length >= 128 && b.toString('latin1', b.length - 128, b.length - 125) === 'TAG' ? 128 : 0;
  return ((b.length - start - id3v1) * 8) / frame.bitrate;
}
