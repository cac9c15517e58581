// Text as XML documents write it (podcast feeds, RadioDNS SPI): characters XML 1.0 cannot carry, and
// control characters (C0 besides tab, newline and carriage return; DEL and C1), are dropped; so is half
// of a surrogate pair, which no encoder can write. Cutting counts grapheme clusters, so a text is never
// cut inside a character (an emoji with its modifiers and joiners included).

const NOT_CARRIED =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `value` without the characters XML cannot carry and without control characters. */
export function xmlSafe(value: string): string {
  return value.replace(NOT_CARRIED, '');
}

/** `xmlSafe`, every run of whitespace one space, trimmed: a one-line text (a title). */
export function xmlLine(value: string): string {
  return xmlSafe(value).replace(/\s+/g, ' ').trim();
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** `text` cut to at most `max` grapheme clusters (user-perceived characters); unchanged when shorter. */
export function cutGraphemes(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = '';
  let count = 0;
  for (const { segment } of graphemes.segment(text)) {
    if (++count > max) return out.trimEnd();
    out += segment;
  }
  return out;
}
