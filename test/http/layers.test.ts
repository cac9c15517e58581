import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';

// Dependencies point one way (docs/architecture.md, "Layers"): roles → composition (src/routes.ts,
// src/services.ts) → domains and GraphQL → the HTTP framework (src/http/) and src/lib/. So nothing in
// src/http/ imports a domain, GraphQL or the route table — type imports included, since a type import
// is a dependency on the shape all the same. The domains' types reach the gates through
// http/subjects.ts's registry instead.

const HTTP = new URL('../../src/http/', import.meta.url);

/** The one file allowed to point up: the route table's re-export, until app.ts takes the table as a parameter. */
const SHIM = 'routes.ts';

function importsOf(source: string): string[] {
  const specs: string[] = [];
  for (const match of source.matchAll(/^\s*(?:import|export)\s+(?:type\s+)?[^'";]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'|import\('([^']+)'\)|^\s*declare module '([^']+)'/gm)) {
    specs.push(match[1] ?? match[2] ?? match[3] ?? match[4]);
  }
  return specs;
}

function upward(spec: string): boolean {
  return /^\.\.\/(domains|graphql|roles)\//.test(spec) || spec === '../routes.ts' || spec === '../main.ts' || spec.startsWith('../../');
}

describe('layers: src/http/ imports no domain', () => {
  const files = readdirSync(HTTP).filter((f) => f.endsWith('.ts'));

  it('finds the framework files and their imports', () => {
    expect(files).to.include.members(['route.ts', 'gates.ts', 'subjects.ts', 'body.ts']);
    expect(importsOf(readFileSync(new URL('route.ts', HTTP), 'utf8'))).to.include('./subjects.ts');
  });

  for (const file of files) {
    if (file === SHIM) continue;
    it(`${file} imports nothing above the framework`, () => {
      const offending = importsOf(readFileSync(new URL(file, HTTP), 'utf8')).filter(upward);
      expect(offending, file).to.deep.equal([]);
    });
  }

  it('the route-table shim only re-exports the composition', () => {
    const source = readFileSync(new URL(SHIM, HTTP), 'utf8');
    expect(importsOf(source)).to.deep.equal(['../routes.ts']);
  });

  it('the check notices a domain import', () => {
    expect(importsOf("import type { Station } from '../domains/stations/model.ts';").filter(upward)).to.deep.equal(['../domains/stations/model.ts']);
    expect(importsOf("import { allRoutes } from '../routes.ts';").filter(upward)).to.deep.equal(['../routes.ts']);
  });
});
