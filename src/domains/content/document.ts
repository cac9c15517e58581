import type { Issue } from '../../lib/errors.ts';
import type { RecordDocument } from './model.ts';

/**
 * The structured document beyond its JSON Schema: block ids unique, and wherever a block's content is
 * an array its entries are objects whose `text` is a string and `marks` an array (text content is an
 * array of `{text, marks}`). Other block content (an embed, a media reference) is kept as sent.
 */
export function checkDocument(document: RecordDocument): Issue[] {
  const issues: Issue[] = [];
  const ids = new Set<string>();
  document.blocks.forEach((block, i) => {
    const path = `document.blocks.${i}`;
    if (ids.has(block.id)) issues.push({ path: `${path}.id`, code: 'duplicate', message: `block id "${block.id}" is used twice` });
    ids.add(block.id);
    if (!Array.isArray(block.content)) return;
    block.content.forEach((span: unknown, j) => {
      const at = `${path}.content.${j}`;
      if (typeof span !== 'object' || span === null || Array.isArray(span)) {
        issues.push({ path: at, code: 'invalid_type', message: `${at} must be an object such as {text, marks}` });
        return;
      }
      const { text, marks } = span as { text?: unknown; marks?: unknown };
      if ('text' in span && typeof text !== 'string')
        issues.push({ path: `${at}.text`, code: 'invalid_type', message: `${at}.text must be a string` });
      if ('marks' in span && !Array.isArray(marks))
        issues.push({ path: `${at}.marks`, code: 'invalid_type', message: `${at}.marks must be an array` });
    });
  });
  return issues;
}
