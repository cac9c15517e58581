import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { closest, distance } from 'fastest-levenshtein';
import type { TSchema } from '@sinclair/typebox';
import { ValidationError, type Issue } from '../lib/errors.ts';

// ajv-formats ships CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const bodyAjv = addFormats(new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes: false }));
// Query strings and path parameters arrive as strings (repeated ones as arrays): coerce them.
const queryAjv = addFormats(new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes: 'array' }));

export type Source = 'query' | 'params' | 'body';

const cache = new WeakMap<TSchema, ValidateFunction>();

export function compile(schema: TSchema, source: Source): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = (source === 'body' ? bodyAjv : queryAjv).compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

/** The closest allowed value, when it is close enough to be what the caller meant. */
export function suggest(value: unknown, allowed: readonly unknown[]): string | undefined {
  const candidates = allowed.filter((v): v is string => typeof v === 'string');
  if (typeof value !== 'string' || candidates.length === 0 || value === '') return undefined;
  const lower = value.toLowerCase();
  // A value cut short ("now") names what it begins; a value that runs past a shorter name
  // ("artworkLookp" past "artwork") is more likely a typo of a longer one ("artworkLookup"): the
  // nearest by edit distance is asked first, the shorter name it begins with only after.
  const completed = candidates.find((c) => c.toLowerCase().startsWith(lower));
  if (completed) return completed;
  const best = closest(
    lower,
    candidates.map((c) => c.toLowerCase()),
  );
  const match = candidates.find((c) => c.toLowerCase() === best);
  if (match !== undefined && distance(lower, best) <= Math.max(2, Math.floor(best.length / 3))) return match;
  return candidates.filter((c) => lower.startsWith(c.toLowerCase())).sort((a, b) => b.length - a.length)[0];
}

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function join(base: string, leaf: string): string {
  return base ? `${base}.${leaf}` : leaf;
}

function valueAt(data: unknown, pointer: string): unknown {
  let current: unknown = data;
  for (const part of pointer.split('/').slice(1)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

export function toIssues(errors: ErrorObject[] | null | undefined, data: unknown, schema: TSchema): Issue[] {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  for (const err of errors ?? []) {
    const base = pointerToPath(err.instancePath);
    let issue: Issue;
    switch (err.keyword) {
      case 'required': {
        const name = (err.params as { missingProperty: string }).missingProperty;
        issue = { path: join(base, name), code: 'required', message: `${join(base, name)} is required` };
        break;
      }
      case 'additionalProperties': {
        const name = (err.params as { additionalProperty: string }).additionalProperty;
        const parent = valueAt(schema, err.schemaPath.replace(/^#/, '').replace(/\/additionalProperties$/, ''));
        const known = parent && typeof parent === 'object' ? Object.keys((parent as { properties?: object }).properties ?? {}) : [];
        issue = { path: join(base, name), code: 'unknown_property', message: `${join(base, name)} is not a known property` };
        const suggestion = suggest(name, known);
        if (suggestion) issue.suggestion = suggestion;
        break;
      }
      case 'enum': {
        const allowed = (err.params as { allowedValues: unknown[] }).allowedValues;
        issue = { path: base, code: 'invalid_value', message: `${base || 'value'} must be one of ${allowed.join(', ')}` };
        const suggestion = suggest(valueAt(data, err.instancePath), allowed);
        if (suggestion) issue.suggestion = suggestion;
        break;
      }
      case 'type':
        issue = { path: base, code: 'invalid_type', message: `${base || 'value'} must be ${(err.params as { type: string }).type}` };
        break;
      case 'maxLength':
      case 'maxItems':
      case 'maximum':
      case 'exclusiveMaximum':
      case 'maxProperties':
        issue = { path: base, code: 'too_big', message: `${base || 'value'} ${err.message}` };
        // The bound itself is the closest valid number (limit=51 → 50).
        if (err.keyword === 'maximum') issue.suggestion = (err.params as { limit: number }).limit;
        break;
      case 'minLength':
      case 'minItems':
      case 'minimum':
      case 'exclusiveMinimum':
      case 'minProperties':
        issue = { path: base, code: 'too_small', message: `${base || 'value'} ${err.message}` };
        if (err.keyword === 'minimum') issue.suggestion = (err.params as { limit: number }).limit;
        break;
      case 'pattern': {
        issue = { path: base, code: 'invalid_format', message: `${base || 'value'} ${err.message}` };
        // A key sent in the wrong case (type=News) has an obvious valid spelling.
        const value = valueAt(data, err.instancePath);
        const pattern = (err.params as { pattern: string }).pattern;
        if (typeof value === 'string' && value.toLowerCase() !== value && new RegExp(pattern).test(value.toLowerCase()))
          issue.suggestion = value.toLowerCase();
        break;
      }
      case 'anyOf':
      case 'oneOf':
        // Branch errors are reported on their own; this summary adds nothing when they exist.
        continue;
      default:
        issue = {
          path: base,
          code: err.keyword === 'pattern' || err.keyword === 'format' ? 'invalid_format' : err.keyword,
          message: `${base || 'value'} ${err.message}`,
        };
    }
    const key = `${issue.path}|${issue.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  // A nullable value's "must be null" branch error is noise next to the real complaint about it.
  return issues.filter(
    (i) => !(i.code === 'invalid_type' && i.message.endsWith('must be null') && issues.some((o) => o !== i && o.path === i.path)),
  );
}

/** Validates (and, for query/params, coerces) input in place; throws ValidationError with issues. */
export function validate<T>(schema: TSchema, source: Source, data: unknown): T {
  const fn = compile(schema, source);
  if (!fn(data)) {
    const issues = toIssues(fn.errors, data, schema);
    const what = source === 'body' ? 'request body' : source === 'query' ? 'query parameters' : 'path parameters';
    throw new ValidationError(`Invalid ${what}.`, issues.length ? issues : [{ path: '', message: 'invalid input' }]);
  }
  return data as T;
}
