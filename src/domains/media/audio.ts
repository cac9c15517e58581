import { PassThrough } from 'node:stream';
import { parseBuffer, parseStream, type IAudioMetadata } from 'music-metadata';

// Audio duration of an upload, read by music-metadata (maintained; MP3 with or without Xing/VBRI
// headers, AAC in ADTS or MP4/M4A, Ogg Vorbis and Opus, FLAC, WAV, AIFF and more), replacing the
// hand-written header readers. `duration: true` lets it scan an MP3 without a frame-count header rather
// than guess from the first frame's bitrate. A file it cannot read has an unknown duration (null), not a
// failed upload.

const OPTIONS = { duration: true, skipCovers: true, skipPostHeaders: true };

/** Seconds to 3 decimals; null when unknown. */
const seconds = (value: number | undefined): number | null =>
  value !== undefined && Number.isFinite(value) && value > 0 ? Math.round(value * 1000) / 1000 : null;

export async function audioDuration(bytes: Buffer, mimeType?: string): Promise<number | null> {
  try {
    const { format } = await parseBuffer(bytes, { mimeType, size: bytes.length }, OPTIONS);
    return seconds(format.duration);
  } catch {
    return null;
  }
}

/**
 * How much of an upload music-metadata reads. Every format states its duration in its first frames or
 * headers (a Xing/VBRI/LAME frame, FLAC STREAMINFO, a WAV header, an MP4 index at the front), or a
 * constant bitrate gives it from the size; only files without any of these (an MP3 without a frame-count
 * header, raw ADTS AAC, Ogg) were counted frame by frame to the end, and random bytes sent as audio were
 * searched byte by byte for frames — most of an upload's time. The SHA-256 and the store still see every
 * byte.
 */
export const PROBE_BYTES = 8 * 1024 * 1024;

/**
 * MP4 and M4A (podcast AAC) are read to the end: an index written after the audio (a file without
 * "faststart", ffmpeg's default) holds the duration, and the MP4 parser passes over the audio by its
 * atom's length, without searching it for frames.
 */
const READ_WHOLE = /^(?:audio|video)\/(?:mp4|x-m4a|m4a|quicktime)$/i;

/**
 * The duration of an upload read while it streams to the store: its first PROBE_BYTES are fed to
 * music-metadata (holding the upload back only while the parser's own buffer is full), the rest passes
 * by unread. When the parser had not finished within them, the duration is estimated for the whole size
 * (`estimate`); unknown (null) when nothing was read that gives one.
 */
export class DurationProbe {
  /** What the parser read, and whether it had read to the end of its input when it finished. */
  private readonly parsed: Promise<{ format: IAudioMetadata['format']; readToEnd: boolean } | null>;
  private readonly input = new PassThrough({ highWaterMark: 4 * 1024 * 1024 });
  private readonly limit: number;
  private readonly size: number | undefined;
  private finished = false;
  /** Bytes given to the parser. */
  private fed = 0;
  /** The parser's input was ended at the limit (the upload is longer). */
  private cut = false;
  /** The parser read to the end of what it was given (it did not stop on its own). */
  private exhausted = false;

  constructor(mimeType: string, size?: number, limit = PROBE_BYTES) {
    this.limit = READ_WHOLE.test(mimeType) ? Infinity : limit;
    this.size = size;
    this.input.once('end', () => (this.exhausted = true));
    this.parsed = parseStream(this.input, { mimeType, size }, OPTIONS)
      .then(
        ({ format }) => ({ format, readToEnd: this.exhausted }),
        () => null,
      )
      .finally(() => {
        this.finished = true;
        this.input.resume();
      });
  }

  /** Bytes music-metadata was given (at most the limit). */
  get bytesFed(): number {
    return this.fed;
  }

  write(chunk: Buffer): Promise<void> | null {
    if (this.finished || this.cut) return null;
    const room = this.limit - this.fed;
    const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.fed += piece.length;
    const more = this.input.write(piece);
    if (this.fed >= this.limit) {
      this.cut = true;
      this.input.end();
      return null;
    }
    if (more) return null;
    return new Promise((ok) => {
      this.input.once('drain', ok);
      void this.parsed.then(() => ok());
    });
  }

  end(): void {
    if (!this.cut) this.input.end();
  }

  /** The duration in seconds, once every byte went by: `received` is the upload's size. */
  async duration(received = this.size): Promise<number | null> {
    const parsed = await this.parsed;
    if (!parsed) return null;
    const { format, readToEnd } = parsed;
    // Finished on its own (within the limit, or a header gave the answer): what it read is the answer.
    if (!this.cut || !readToEnd || !received) return seconds(format.duration);
    return seconds(estimate(format, this.fed, received));
  }

  /** The upload failed: the parser stops. */
  abort(): void {
    this.input.destroy();
  }
}

/**
 * The duration of a file of `received` bytes whose first `fed` bytes were read: the parser's answer is
 * either of those bytes (frames counted, then scaled to the whole size) or from a header (the whole
 * file already); the one nearer the estimate from the bitrate is taken, else that estimate.
 */
function estimate(format: IAudioMetadata['format'], fed: number, received: number): number | undefined {
  const { duration, bitrate } = format;
  const fromBitrate = bitrate !== undefined && Number.isFinite(bitrate) && bitrate > 0 ? (received * 8) / bitrate : undefined;
  if (duration === undefined || !Number.isFinite(duration) || duration <= 0) return fromBitrate;
  const scaled = (duration * received) / fed;
  if (fromBitrate === undefined) return scaled;
  return Math.abs(Math.log(scaled / fromBitrate)) < Math.abs(Math.log(duration / fromBitrate)) ? scaled : duration;
}
