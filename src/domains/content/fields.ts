import type { Issue } from '../../lib/errors.ts';
import { canonicalJson } from '../../lib/canonicalJson.ts';
import { REPEATABLE_KINDS, type FieldDefinition, type FieldKind } from './model.ts';
import type { FieldDefinitionInput } from './schemas.ts';

// Field definitions: the rules the schema alone cannot express (which properties fit which kind,
// unique keys), and one normal form so "did the field list change?" is a string comparison.

const TEXT_KINDS: readonly FieldKind[] = ['text', 'rich_text'];
/** Kinds on which `maxItems` alone makes the field repeated (docs/content.md#field-definitions). */
const MAX_ITEMS_IMPLIES_MULTIPLE: readonly FieldKind[] = ['media', 'content', 'group'];

/** `multiple` as given, or implied by `maxItems` on a media, content or group field. */
const isMultiple = (input: FieldDefinitionInput): boolean | undefined =>
  input.multiple ?? (input.maxItems !== undefined && MAX_ITEMS_IMPLIES_MULTIPLE.includes(input.kind) ? true : undefined);

function checkField(input: FieldDefinitionInput, path: string, issues: Issue[]): void {
  const { kind } = input;
  const notFor = (prop: keyof FieldDefinitionInput, allowed: string) =>
    issues.push({
      path: `${path}.${prop}`,
      code: 'not_allowed',
      message: `${prop} applies only to ${allowed} fields, not to a ${kind} field`,
    });
  if (input.maxLength !== undefined && !TEXT_KINDS.includes(kind)) notFor('maxLength', 'text and rich_text');
  if ((input.min !== undefined || input.max !== undefined) && kind !== 'number') notFor(input.min !== undefined ? 'min' : 'max', 'number');
  if (input.min !== undefined && input.max !== undefined && input.min > input.max) {
    issues.push({ path: `${path}.min`, code: 'invalid_value', message: 'min must not be greater than max' });
  }
  // `multiple: false` says what every other kind is anyway, so it is accepted (and dropped) everywhere.
  if (input.multiple === true && !REPEATABLE_KINDS.includes(kind)) notFor('multiple', REPEATABLE_KINDS.join(', '));
  if (input.maxItems !== undefined && isMultiple(input) !== true) {
    issues.push({ path: `${path}.maxItems`, code: 'not_allowed', message: 'maxItems applies only to repeated fields (multiple: true)' });
  }
  if (kind === 'choices') {
    if (!input.choices) issues.push({ path: `${path}.choices`, code: 'required', message: 'a choices field needs choices' });
    else
      duplicates(
        input.choices.map((c) => c.key),
        `${path}.choices`,
        issues,
      );
  } else if (input.choices !== undefined) notFor('choices', 'choices');
  if (kind === 'content') {
    if (!input.targetType)
      issues.push({
        path: `${path}.targetType`,
        code: 'required',
        message: 'a content field needs targetType (the content type it references)',
      });
  } else if (input.targetType !== undefined) notFor('targetType', 'content');
  if (kind === 'group') {
    if (!input.fields) issues.push({ path: `${path}.fields`, code: 'required', message: 'a group field needs nested fields' });
  } else if (input.fields !== undefined) notFor('fields', 'group');
}

function duplicates(keys: string[], path: string, issues: Issue[]): void {
  const seen = new Set<string>();
  keys.forEach((key, i) => {
    if (seen.has(key)) issues.push({ path: `${path}.${i}.key`, code: 'duplicate', message: `key "${key}" is used twice` });
    seen.add(key);
  });
}

function normalise(input: FieldDefinitionInput, path: string, issues: Issue[]): FieldDefinition {
  checkField(input, path, issues);
  // Every flag explicit, so `required` omitted and `required: false` are the same definition.
  const field: FieldDefinition = {
    key: input.key,
    label: input.label,
    kind: input.kind,
    required: input.required ?? false,
    private: input.private ?? false,
    system: input.system ?? false,
  };
  if (input.maxLength !== undefined) field.maxLength = input.maxLength;
  if (input.min !== undefined) field.min = input.min;
  if (input.max !== undefined) field.max = input.max;
  if (input.choices) field.choices = input.choices.map((c) => ({ key: c.key, label: c.label }));
  if (REPEATABLE_KINDS.includes(input.kind)) field.multiple = isMultiple(input) ?? false;
  if (input.targetType !== undefined) field.targetType = input.targetType;
  if (input.maxItems !== undefined) field.maxItems = input.maxItems;
  if (input.fields) field.fields = normaliseList(input.fields, `${path}.fields`, issues);
  return field;
}

function normaliseList(inputs: FieldDefinitionInput[], path: string, issues: Issue[]): FieldDefinition[] {
  duplicates(
    inputs.map((f) => f.key),
    path,
    issues,
  );
  return inputs.map((input, i) => normalise(input, `${path}.${i}`, issues));
}

/** Normalised definitions, or the issues that make the list invalid (paths from the request body). */
export function normaliseFields(inputs: FieldDefinitionInput[]): { fields: FieldDefinition[]; issues: Issue[] } {
  const issues: Issue[] = [];
  const fields = normaliseList(inputs, 'fields', issues);
  const slug = fields.findIndex((f) => f.key === 'slug');
  if (slug >= 0 && fields[slug].kind !== 'text') {
    issues.push({ path: `fields.${slug}.kind`, code: 'invalid_value', message: 'the slug field must be a text field', suggestion: 'text' });
  }
  return { fields, issues };
}

/** Stored definitions come back from jsonb with their keys reordered, hence the canonical form. */
export const sameFields = (a: FieldDefinition[], b: FieldDefinition[]): boolean => canonicalJson(a) === canonicalJson(b);

/** Top-level text and choices fields listeners may filter on. */
export const filterableFields = (fields: FieldDefinition[]): FieldDefinition[] =>
  fields.filter((f) => !f.private && !f.system && (f.kind === 'text' || f.kind === 'choices'));
