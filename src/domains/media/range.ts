// Which bytes a media request gets (docs/media.md#published-media-bytes, RFC 9110 §13–14): one `bytes=` range
// (`a-b`, `a-`, `-n`) → 206; one that starts past the end → 416; several ranges, a range the server
// does not understand, or an `If-Range` that does not match the current ETag → the whole file.

export type RangePlan = { status: 200; start: 0; end: number } | { status: 206; start: number; end: number } | { status: 416 };

const BYTE_RANGE = /^(\d*)-(\d*)$/;

/** `If-Range` carries an entity tag compared strongly; a date (we send no Last-Modified) or a weak tag never matches. */
function ifRangeHolds(ifRange: string, etag: string): boolean {
  return ifRange.trim() === etag;
}

export function planRange(input: { range: string; ifRange: string; etag: string; size: number }): RangePlan {
  const { size } = input;
  const whole: RangePlan = { status: 200, start: 0, end: size - 1 };
  if (!input.range) return whole;
  if (input.ifRange && !ifRangeHolds(input.ifRange, input.etag)) return whole;
  const unit = /^\s*bytes\s*=(.*)$/i.exec(input.range);
  if (!unit) return whole;
  const specs = unit[1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (specs.length !== 1) return whole;
  const spec = BYTE_RANGE.exec(specs[0]);
  if (!spec || (spec[1] === '' && spec[2] === '')) return whole;
  if (spec[1] === '') {
    // Suffix: the last n bytes (all of them when the file is shorter).
    const n = Number(spec[2]);
    if (n === 0 || size === 0) return { status: 416 };
    return { status: 206, start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(spec[1]);
  const last = spec[2] === '' ? Infinity : Number(spec[2]);
  if (last < start) return whole; // not a valid range: ignored, as RFC 9110 says
  if (start >= size) return { status: 416 };
  return { status: 206, start, end: Math.min(last, size - 1) };
}
