import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { DurationProbe, PROBE_BYTES } from '../../../src/domains/media/audio.ts';
import { mp3, wav } from './helpers.ts';

/** Feeds `bytes` to a probe in 64 KiB pieces, as a request body arrives; its duration and what it read. */
async function probe(bytes: Buffer, mime: string, declared = true): Promise<{ duration: number | null; fed: number }> {
  const reader = new DurationProbe(mime, declared ? bytes.length : undefined);
  for (let at = 0; at < bytes.length; at += 64 * 1024) {
    const wait = reader.write(bytes.subarray(at, at + 64 * 1024));
    if (wait) await wait;
  }
  reader.end();
  return { duration: await reader.duration(bytes.length), fed: reader.bytesFed };
}

/** MPEG-1 Layer III frames alternating 128 and 160 kbit/s (variable bitrate, no Xing header): counted, not read from a header. */
function variableMp3(frames: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < frames; i++) {
    const fast = i % 2 === 1;
    const frame = Buffer.alloc(fast ? 522 : 417);
    frame.set([0xff, 0xfb, fast ? 0xa0 : 0x90, 0x00]);
    parts.push(frame);
  }
  return Buffer.concat(parts);
}

describe('audio duration of an upload (music-metadata on a bounded prefix)', () => {
  it('reads at most the first 8 MiB of an upload: random bytes sent as audio are not searched to the end for frames', async () => {
    const { fed } = await probe(randomBytes(3 * PROBE_BYTES), 'audio/mpeg');
    expect(PROBE_BYTES).to.equal(8 * 1024 * 1024);
    expect(fed).to.be.at.most(PROBE_BYTES);
  });

  it('gives the same durations past the prefix: a header (WAV), a constant bitrate and the size (MP3), frames counted in the prefix and scaled (VBR MP3 without a frame-count header)', async () => {
    const long = await probe(wav(1300), 'audio/wav');
    expect(long.fed).to.be.at.most(PROBE_BYTES);
    expect(long.duration).to.equal(1300);
    // 50 000 frames of 1152 samples at 44.1 kHz: 1306.1 s (20 MiB).
    for (const declared of [true, false]) {
      const cbr = await probe(mp3(50_000), 'audio/mpeg', declared);
      expect(cbr.fed, `declared size: ${declared}`).to.be.at.most(PROBE_BYTES);
      expect(cbr.duration, `declared size: ${declared}`).to.be.closeTo(1306.1, 1306.1 * 0.005);
    }
    const vbr = await probe(variableMp3(50_000), 'audio/mpeg');
    expect(vbr.fed).to.be.at.most(PROBE_BYTES);
    expect(vbr.duration).to.be.closeTo(1306.1, 1306.1 * 0.005);
  });

  it('a file within the prefix is read whole, as before (exact frame count)', async () => {
    expect((await probe(variableMp3(1000), 'audio/mpeg')).duration).to.equal(26.122);
    expect((await probe(mp3(100, { id3: true }), 'audio/mpeg')).duration).to.equal(2.612);
  });

  it('an M4A over 8 MiB whose index comes after the audio (no "faststart") keeps its duration: MP4 is read to the end, its audio passed over by length', async () => {
    // test/fixtures/audio/tone.m4a has its `moov` index after its `mdat`: the audio grows by 9 MiB of
    // padding inside `mdat` (the index's offsets point before it), the index stays last.
    const small = readFileSync(new URL('../../fixtures/audio/tone.m4a', import.meta.url));
    const mdat = small.indexOf('mdat') - 4;
    const moov = small.indexOf('moov') - 4;
    expect(moov).to.be.greaterThan(mdat);
    const pad = 9 * 1024 * 1024;
    const size = Buffer.alloc(4);
    size.writeUInt32BE(small.readUInt32BE(mdat) + pad);
    const large = Buffer.concat([small.subarray(0, mdat), size, small.subarray(mdat + 4, moov), Buffer.alloc(pad), small.subarray(moov)]);
    expect(large.length).to.be.greaterThan(PROBE_BYTES);
    const expected = (await probe(small, 'audio/mp4')).duration;
    expect(expected).to.be.a('number').and.greaterThan(0);
    expect((await probe(large, 'audio/mp4')).duration).to.equal(expected);
    expect((await probe(large, 'audio/x-m4a')).duration).to.equal(expected);
  });
});
