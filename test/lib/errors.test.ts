import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import * as errors from '../../src/lib/errors.ts';
import { ERROR_CODES, WavelineError } from '../../src/lib/errors.ts';

describe('error code catalogue', () => {
  it('docs/errors.md lists every code the error body can carry', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const code of ERROR_CODES) expect(doc, code).to.include(`| \`${code}\` |`);
  });

  it('is derived from the error classes: every exported class code is in it, and nothing else but INTERNAL_ERROR', () => {
    const classCodes = new Set<string>();
    for (const value of Object.values(errors)) {
      if (typeof value !== 'function' || !(value.prototype instanceof WavelineError)) continue;
      const error = Reflect.construct(value, ['x']) as WavelineError;
      expect(error, value.name).to.be.instanceOf(value);
      expect(error.name).to.equal(value.name);
      classCodes.add(error.code);
    }
    expect(classCodes.size).to.be.greaterThan(10);
    expect([...new Set(ERROR_CODES)].sort()).to.deep.equal([...classCodes, 'INTERNAL_ERROR'].sort());
    expect(ERROR_CODES).to.include('METHOD_NOT_ALLOWED');
  });
});
