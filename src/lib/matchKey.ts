// How names typed by people are compared wherever a rule matches them (artwork pins, the listener
// inbox's request policy): one form, so two spellings that differ only in width, case or spacing match.

/**
 * The form names compare in: Unicode NFKC, case folded (upper then lower case folds ß to ss and
 * the like), trimmed, runs of white space collapsed to one space.
 */
export function matchKey(value: string): string {
  return value.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').trim().replace(/\s+/gu, ' ');
}
