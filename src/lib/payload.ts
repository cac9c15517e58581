import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { ValidationError } from './errors.ts';

// Checks a value against a TypeBox schema outside HTTP (job payloads): the same ajv, its own instance,
// issues named after the value's own paths — not the request-body wording of http/validate.ts.

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes: false }));
const compiled = new WeakMap<TSchema, ValidateFunction>();

/** `data` when it matches `schema`; otherwise a ValidationError naming `what` and each wrong path. */
export function checkPayload<T>(schema: TSchema, data: unknown, what: string): T {
  let fn = compiled.get(schema);
  if (!fn) compiled.set(schema, (fn = ajv.compile(schema)));
  if (fn(data)) return data as T;
  const issues = (fn.errors ?? []).map((err) => {
    const path = ['payload', ...err.instancePath.split('/').slice(1)].join('.');
    return { path, code: err.keyword, message: `${path} ${err.message ?? 'is invalid'}` };
  });
  throw new ValidationError(`Invalid ${what}.`, issues.length ? issues : [{ path: 'payload', message: 'invalid payload' }]);
}
