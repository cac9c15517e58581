import type { Knex } from 'knex';
import { closest } from 'fastest-levenshtein';
import { ValidationError, type Issue } from '../../lib/errors.ts';
import { suggest } from '../../http/validate.ts';
import { KEY_PATTERN } from '../../http/schema.ts';
import { filterableFields } from './fields.ts';
import type { FieldDefinition } from './model.ts';

// Content list filters: `field:value` (exact), `field.contains:value` (case-insensitive substring),
// `field.anyOf:a,b` (any listed value). All must match. Only delivered text and choices fields; on a
// `multiple` choices field each form matches when any chosen key matches.

export const FILTER_OPS = ['exact', 'contains', 'anyOf'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export interface ContentFilter {
  field: string;
  op: FilterOp;
  values: string[];
}

const MAX_ANY_OF = 50;
const FILTER_FORM = /^([^.:]+)(?:\.([^:]*))?:(.*)$/s;
const KEY = new RegExp(KEY_PATTERN);
const FORMS = 'field:value, field.contains:value or field.anyOf:a,b';

function parseOne(raw: string, index: number): ContentFilter | Issue {
  const at = `filter ${index + 1} ("${raw}")`;
  const match = FILTER_FORM.exec(raw);
  if (!match) return { path: 'filter', code: 'invalid_format', message: `${at} must have the form ${FORMS}` };
  const [, field, opText, value] = match;
  if (!KEY.test(field)) {
    const issue: Issue = { path: 'filter', code: 'invalid_format', message: `${at}: "${field}" is not a field key` };
    if (KEY.test(field.toLowerCase())) issue.suggestion = `${field.toLowerCase()}${raw.slice(field.length)}`;
    return issue;
  }
  let op: FilterOp = 'exact';
  if (opText !== undefined) {
    if (opText !== 'contains' && opText !== 'anyOf') {
      const issue: Issue = {
        path: 'filter',
        code: 'invalid_value',
        message: `${at}: the operator must be contains or anyOf (or none for an exact match)`,
      };
      const near = suggest(opText, ['contains', 'anyOf']);
      if (near) issue.suggestion = `${field}.${near}:${value}`;
      return issue;
    }
    op = opText;
  }
  const values = op === 'anyOf' ? value.split(',') : [value];
  if (values.some((v) => v === ''))
    return {
      path: 'filter',
      code: 'invalid_format',
      message: `${at} needs a value after ":"${op === 'anyOf' ? ' and no empty entries between commas' : ''}`,
    };
  if (values.length > MAX_ANY_OF) return { path: 'filter', code: 'too_big', message: `${at} lists more than ${MAX_ANY_OF} values` };
  return { field, op, values };
}

/** Parses `filter` parameters; any malformed one is a 400 naming `filter`. */
export function parseFilters(raw: readonly string[]): ContentFilter[] {
  const filters: ContentFilter[] = [];
  const issues: Issue[] = [];
  raw.forEach((text, i) => {
    const parsed = parseOne(text, i);
    if ('path' in parsed) issues.push(parsed);
    else filters.push(parsed);
  });
  if (issues.length > 0) throw new ValidationError('Invalid filter.', issues);
  return filters;
}

/**
 * 400 for a filter on anything but a delivered text or choices field, suggesting the closest one.
 * Private and system fields get the same answer as unknown ones, so their existence does not leak.
 *
 * Returns the filters as they match: a `field:value` or `field.anyOf:…` value on a choices field that
 * is not one of its current keys is no error but matches nothing (docs/content.md#listener-reads), even
 * on records that still hold it as a retired key — so it is dropped here, and a filter left with no
 * value matches no record (`applyFilters`). A renamed choice never breaks a client with a 400.
 */
export function checkFilterFields(filters: ContentFilter[], fields: FieldDefinition[], type: string): ContentFilter[] {
  const filterable = filterableFields(fields);
  const allowed = filterable.map((f) => f.key);
  const issues: Issue[] = [];
  const matching: ContentFilter[] = [];
  for (const filter of filters) {
    const field = filterable.find((f) => f.key === filter.field);
    if (field) {
      if (field.kind !== 'choices' || filter.op === 'contains') matching.push(filter);
      else {
        const keys = new Set((field.choices ?? []).map((c) => c.key));
        matching.push({ ...filter, values: filter.values.filter((v) => keys.has(v)) });
      }
      continue;
    }
    const issue: Issue = {
      path: 'filter',
      code: 'not_filterable',
      message: `"${filter.field}" is not a filterable field of ${type}; only text and choices fields can be filtered`,
    };
    if (allowed.length > 0) issue.suggestion = closest(filter.field, allowed);
    issues.push(issue);
  }
  if (issues.length > 0) throw new ValidationError('Invalid filter.', issues);
  return matching;
}

/** Order-independent form of a filter set, for binding cursors to it. */
export const canonicalFilters = (filters: ContentFilter[]): string[] =>
  filters.map((f) => `${f.field}\u0000${f.op}\u0000${f.values.join('\u0000')}`).sort();

const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Adds the filters to a published_records query. Exact and anyOf use jsonb containment (GIN index on
 * delivered_values): `{f: v}` matches a single value, `{f: [v]}` one key among several.
 */
export function applyFilters(query: Knex.QueryBuilder, filters: ContentFilter[]): void {
  for (const { field, op, values } of filters) {
    if (op === 'contains') {
      const pattern = likePattern(values[0]);
      query.whereRaw(
        `(CASE jsonb_typeof(delivered_values -> ?) WHEN 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements_text(delivered_values -> ?) AS chosen(key) WHERE chosen.key ILIKE ?) ELSE delivered_values ->> ? ILIKE ? END)`,
        [field, field, pattern, field, pattern],
      );
      continue;
    }
    if (values.length === 0) {
      query.whereRaw('FALSE'); // only values no choice has any more (checkFilterFields)
      continue;
    }
    const alternatives = values.flatMap((v) => [JSON.stringify({ [field]: v }), JSON.stringify({ [field]: [v] })]);
    query.whereRaw(`(${alternatives.map(() => 'delivered_values @> ?::jsonb').join(' OR ')})`, alternatives);
  }
}
