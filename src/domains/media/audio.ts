import { PassThrough } from 'node:stream';
import { parseBuffer, parseStream } from 'music-metadata';

// Audio duration of an upload, read by music-metadata (maintained; MP3 with or without Xing/VBRI
// headers, AAC in ADTS or MP4/M4A, Ogg Vorbis and Opus, FLAC, WAV, AIFF and more), replacing the
// hand-written header readers. `duration: true` lets it scan an MP3 without a frame-count header rather
// than guess from the first frame's bitrate. A file it cannot read has an unknown duration (null), not a
// failed upload.

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

export async function audioDuration(bytes: Buffer, mimeType?: string): Promise<number | null> {
  try {
    const { format } = await parseBuffer(
      bytes,
      { mimeType, size: bytes.length },
      { duration: true, skipCovers: true, skipPostHeaders: true },
    );
    const seconds = format.duration;
    return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? round(seconds) : null;
  } catch {
    return null;
  }
}

/**
 * The duration of an upload read while it streams to the store (the same reading as `audioDuration`):
 * fed chunk by chunk, holding the upload back only while its own buffer is full; once the parser has
 * what it needs, the rest passes by unread.
 */
export class DurationProbe {
  readonly duration: Promise<number | null>;
  private readonly input = new PassThrough({ highWaterMark: 4 * 1024 * 1024 });
  private finished = false;

  constructor(mimeType: string, size?: number) {
    this.duration = parseStream(this.input, { mimeType, size }, { duration: true, skipCovers: true, skipPostHeaders: true })
      .then(
        ({ format }) =>
          format.duration !== undefined && Number.isFinite(format.duration) && format.duration > 0 ? round(format.duration) : null,
        () => null,
      )
      .finally(() => {
        this.finished = true;
        this.input.resume();
      });
  }

  write(chunk: Buffer): Promise<void> | null {
    if (this.finished || this.input.write(chunk)) return null;
    return new Promise((ok) => {
      this.input.once('drain', ok);
      void this.duration.then(() => ok());
    });
  }

  end(): void {
    this.input.end();
  }

  /** The upload failed: the parser stops. */
  abort(): void {
    this.input.destroy();
  }
}
