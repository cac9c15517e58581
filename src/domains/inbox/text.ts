import { matchKey } from '../../lib/matchKey.ts';
import type { InboxSetting } from './setting.ts';

// What the inbox reads in listeners' text (docs/inbox.md, "Moderation" and "The request catalogue"):
// blocked words and links (which hold a message for review) and the accent-free search form.

/** The form `requestable` searches in: compared as names are (lib/matchKey.ts), accents dropped. */
export const searchKey = (value: string): string =>
  matchKey(value)
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC');

// A link: a scheme, `www.`, or a name ending in a common top-level domain (an e-mail address included).
const LINK = new RegExp(
  String.raw`[a-z][a-z0-9+.-]*://\S|\bwww\.\S|[\p{L}\p{N}-]\.(?:com|net|org|info|biz|io|co|me|app|dev|xyz|link|site|online|shop|ly|gg|tv|fm|to|ru|cn|de|uk|fr|nl|be|ch|at|es|it|pl|us|ca|au|in|br|eu)(?![\p{L}\p{N}])`,
  'iu',
);

/** Whether the text holds a link. */
export const holdsLink = (text: string): boolean => LINK.test(matchKey(text));

const patterns = new WeakMap<readonly string[], RegExp | null>();

/** One pattern per blocked-word list: any of them as a whole word, in compared form. */
function blockedPattern(words: readonly string[]): RegExp | null {
  let pattern = patterns.get(words);
  if (pattern === undefined) {
    const keys = [...new Set(words.map(matchKey).filter((key) => key !== ''))];
    const escaped = keys.map((key) => key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    pattern = escaped.length ? new RegExp(`(?<![\\p{L}\\p{N}\\p{M}_])(?:${escaped.join('|')})(?![\\p{L}\\p{N}\\p{M}_])`, 'u') : null;
    patterns.set(words, pattern);
  }
  return pattern;
}

/** Whether any of the texts holds a blocked word as a whole word (compared as names are). */
export function holdsBlockedWord(words: readonly string[], texts: ReadonlyArray<string | null | undefined>): boolean {
  const pattern = blockedPattern(words);
  if (!pattern) return false;
  return texts.some((text) => typeof text === 'string' && pattern.test(matchKey(text)));
}

/** Whether a message waits for the studio's review: a blocked word, or (with `holdLinks`) a link, in what the listener wrote. */
export function needsReview(setting: Pick<InboxSetting, 'blockedWords' | 'holdLinks'>, texts: ReadonlyArray<string | null>): boolean {
  return holdsBlockedWord(setting.blockedWords, texts) || (setting.holdLinks && texts.some((text) => text !== null && holdsLink(text)));
}
