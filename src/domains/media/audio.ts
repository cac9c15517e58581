import { parseBuffer } from 'music-metadata';

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
