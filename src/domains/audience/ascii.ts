// The census report is ASCII (docs/audience.md#filing-the-soundexchange-report-of-use): letters with
// diacritics lose them (Unicode NFKD splits "é" into "e" and a combining accent, which is dropped); the few
// Latin letters NFKD does not split get their usual spelled-out form; anything else (other scripts, emoji)
// becomes "?". No library: NFKD covers what Latin-script catalogues hold, and a transliteration table for
// other scripts would be a guess a rights organisation could not match against its own catalogue anyway.

const LETTERS: Record<string, string> = {
  ß: 'ss',
  ẞ: 'SS',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ø: 'o',
  Ø: 'O',
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'TH',
  ı: 'i',
  ħ: 'h',
  Ħ: 'H',
  ŋ: 'ng',
  Ŋ: 'NG',
  '‘': "'",
  '’': "'",
  '‚': "'",
  '‛': "'",
  '“': '"',
  '”': '"',
  '„': '"',
  '‟': '"',
  '–': '-',
  '—': '-',
  '‐': '-',
  '‑': '-',
  '−': '-',
  '…': '...',
  '•': '*',
  '×': 'x',
  '«': '"',
  '»': '"',
  '‹': "'",
  '›': "'",
};

/** One report field: ASCII only, no tab or line break (they would split the row). */
export function asciiField(value: string | null | undefined): string {
  if (!value) return '';
  return value
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]/gu, (ch) => (/[\t\r\n\v\f\u2028\u2029]/u.test(ch) ? ' ' : (LETTERS[ch] ?? '?')))
    .trim();
}
