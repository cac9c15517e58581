import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { ERROR_CODES } from '../../src/lib/errors.ts';

describe('error code catalogue', () => {
  it('docs/errors.md lists every code the error body can carry', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const code of ERROR_CODES) expect(doc, code).to.include(`| \`${code}\` |`);
  });
});
