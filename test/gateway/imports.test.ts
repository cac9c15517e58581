import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

// The gateway process never loads Koa or knex (STYLE.md, "The layout shows the architecture").

function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(
      /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'|import\('([^']+)'\)/gm,
    )) {
      if (match[2]) continue; // type-only imports vanish at run time
      const spec = match[3] ?? match[4] ?? match[5];
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('gateway role imports', () => {
  it('never loads Koa or knex', () => {
    const { packages } = importGraph(fileURLToPath(new URL('../../src/roles/gateway.ts', import.meta.url)));
    expect(packages).to.include('uWebSockets.js');
    for (const banned of ['koa', '@koa/router', 'koa-body', 'knex']) expect([...packages]).to.not.include(banned);
  });
});
