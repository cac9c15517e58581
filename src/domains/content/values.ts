import type { Issue } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { suggest } from '../../http/validate.ts';
import { isDelivered, type FieldDefinition, type Values } from './model.ts';

// Record values checked against a type version's field definitions. Drafts are checked for shape
// (kinds, bounds, choices, references); required fields only at publish.

/** A reference to another stored thing, checked against the database by the caller. */
export interface Reference {
  id: string;
  path: string;
  targetType?: string;
}

export interface CheckedValues {
  values: Values;
  issues: Issue[];
  media: Reference[];
  content: Reference[];
}

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const codePoints = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

class Checker {
  readonly issues: Issue[] = [];
  readonly media: Reference[] = [];
  readonly content: Reference[] = [];

  object(fields: FieldDefinition[], input: Record<string, unknown>, path: string): Values {
    const out: Values = {};
    const keys = fields.map((f) => f.key);
    for (const [key, value] of Object.entries(input)) {
      const field = fields.find((f) => f.key === key);
      if (!field) {
        const issue: Issue = { path: `${path}.${key}`, code: 'unknown_property', message: `${key} is not a field of this content type` };
        const suggestion = suggest(key, keys);
        if (suggestion) issue.suggestion = suggestion;
        this.issues.push(issue);
        continue;
      }
      if (value === null || value === undefined) continue; // an absent value
      const checked = this.field(field, value, `${path}.${key}`);
      if (checked !== undefined) out[key] = checked;
    }
    return out;
  }

  private field(field: FieldDefinition, value: unknown, path: string): unknown {
    if (!field.multiple) return this.single(field, value, path);
    if (!Array.isArray(value)) return this.fail(path, 'invalid_type', `${path} must be an array (the field accepts several values)`);
    if (field.maxItems !== undefined && value.length > field.maxItems) {
      return this.fail(path, 'too_big', `${path} must have at most ${field.maxItems} entries`, field.maxItems);
    }
    const items = value.map((item, i) => this.single(field, item, `${path}.${i}`));
    if (field.kind !== 'group') {
      const seen = new Set<unknown>();
      items.forEach((item, i) => {
        if (item !== undefined && seen.has(item)) this.fail(`${path}.${i}`, 'duplicate', `${path} lists ${String(item)} twice`);
        seen.add(item);
      });
    }
    return items;
  }

  private single(field: FieldDefinition, value: unknown, path: string): unknown {
    switch (field.kind) {
      case 'text':
      case 'rich_text':
        if (typeof value !== 'string') return this.fail(path, 'invalid_type', `${path} must be a string`);
        if (field.maxLength !== undefined && codePoints(value) > field.maxLength) {
          return this.fail(path, 'too_big', `${path} must be at most ${field.maxLength} characters`);
        }
        if (field.key === 'slug' && path === 'values.slug' && (value.length < 1 || value.length > 200 || value.includes('/'))) {
          return this.fail(path, 'invalid_format', 'values.slug must be 1 to 200 characters without "/"');
        }
        return value;
      case 'number':
        if (typeof value !== 'number' || !Number.isFinite(value)) return this.fail(path, 'invalid_type', `${path} must be a number`);
        if (field.min !== undefined && value < field.min)
          return this.fail(path, 'too_small', `${path} must be at least ${field.min}`, field.min);
        if (field.max !== undefined && value > field.max)
          return this.fail(path, 'too_big', `${path} must be at most ${field.max}`, field.max);
        return value;
      case 'boolean':
        return typeof value === 'boolean' ? value : this.fail(path, 'invalid_type', `${path} must be a boolean`);
      case 'datetime': {
        const at = typeof value === 'string' && ISO_DATETIME.test(value) ? new Date(value) : null;
        if (!at || Number.isNaN(at.getTime()))
          return this.fail(path, 'invalid_format', `${path} must be an ISO 8601 timestamp with a time zone`);
        return at.toISOString();
      }
      case 'choices': {
        const keys = (field.choices ?? []).map((c) => c.key);
        if (typeof value !== 'string') return this.fail(path, 'invalid_type', `${path} must be a choice key`);
        if (!keys.includes(value))
          return this.fail(path, 'invalid_value', `${path} must be one of ${keys.join(', ')}`, suggest(value, keys));
        return value;
      }
      case 'media':
      case 'content': {
        if (typeof value !== 'string' || !isUuid(value)) return this.fail(path, 'invalid_format', `${path} must be a UUID`);
        const id = value.toLowerCase();
        if (field.kind === 'media') this.media.push({ id, path });
        else this.content.push({ id, path, targetType: field.targetType });
        return id;
      }
      case 'group':
        if (!isPlainObject(value)) return this.fail(path, 'invalid_type', `${path} must be an object`);
        return this.object(field.fields ?? [], value, path);
    }
  }

  private fail(path: string, code: string, message: string, suggestion?: string | number): undefined {
    this.issues.push(suggestion === undefined ? { path, code, message } : { path, code, message, suggestion });
    return undefined;
  }
}

/** Checks and normalises draft values (datetimes to UTC, ids to lower case); null means absent. */
export function checkValues(fields: FieldDefinition[], input: Record<string, unknown>): CheckedValues {
  const checker = new Checker();
  const values = checker.object(fields, input, 'values');
  return { values, issues: checker.issues, media: checker.media, content: checker.content };
}

const isEmpty = (value: unknown): boolean =>
  value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

/** Issues for required fields without a value, nested groups included (checked at publish). */
export function missingRequired(fields: FieldDefinition[], values: Values, path = 'values'): Issue[] {
  const issues: Issue[] = [];
  for (const field of fields) {
    const value = values[field.key];
    const at = `${path}.${field.key}`;
    if (isEmpty(value)) {
      if (field.required) issues.push({ path: at, code: 'required', message: `${at} is required to publish` });
      continue;
    }
    if (field.kind !== 'group') continue;
    const items = field.multiple ? (value as Values[]) : [value as Values];
    items.forEach((item, i) => issues.push(...missingRequired(field.fields ?? [], item, field.multiple ? `${at}.${i}` : at)));
  }
  return issues;
}

/** The values listeners see: private and system fields removed at every level. */
export function deliveredValues(fields: FieldDefinition[], values: Values): Values {
  const out: Values = {};
  for (const field of fields) {
    if (!isDelivered(field) || !(field.key in values)) continue;
    const value = values[field.key];
    if (field.kind === 'group') {
      const nested = field.fields ?? [];
      out[field.key] = field.multiple
        ? (value as Values[]).map((v) => deliveredValues(nested, v))
        : deliveredValues(nested, value as Values);
    } else {
      out[field.key] = value;
    }
  }
  return out;
}

/** Media version ids referenced by delivered media fields (they become public with the record). */
export function deliveredMediaIds(fields: FieldDefinition[], values: Values): string[] {
  const ids: string[] = [];
  for (const field of fields) {
    if (!(field.key in values)) continue;
    const value = values[field.key];
    const items = field.multiple ? (value as unknown[]) : [value];
    if (field.kind === 'media') ids.push(...(items as string[]));
    if (field.kind === 'group') for (const item of items) ids.push(...deliveredMediaIds(field.fields ?? [], item as Values));
  }
  return ids;
}
