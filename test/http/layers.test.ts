import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';

// Dependencies point one way (docs/architecture.md, "Layers"): roles → composition (src/routes.ts,
// src/services.ts) → domains and GraphQL → the HTTP framework (src/http/) and src/lib/. So nothing in
// src/http/ imports a domain, GraphQL, the route table or the services — type imports included, since a
// type import is a dependency on the shape all the same. The domains' types and the composition's
// services reach the framework through http/subjects.ts's registry instead, and the route table is
// handed to buildApp by the web role.

const HTTP = new URL('../../src/http/', import.meta.url);
const SRC = new URL('../../src/', import.meta.url);

function importsOf(source: string): string[] {
  const specs: string[] = [];
  for (const match of source.matchAll(
    /^\s*(?:import|export)\s+(?:type\s+)?[^'";]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'|import\('([^']+)'\)|^\s*declare module '([^']+)'/gm,
  )) {
    specs.push(match[1] ?? match[2] ?? match[3] ?? match[4]);
  }
  return specs;
}

function upward(spec: string): boolean {
  return (
    /^\.\.\/(domains|graphql|roles)\//.test(spec) ||
    ['../routes.ts', '../services.ts', '../main.ts', '../jobs.ts'].includes(spec) ||
    spec.startsWith('../../')
  );
}

describe('layers: src/http/ imports no domain', () => {
  const files = readdirSync(HTTP).filter((f) => f.endsWith('.ts'));

  it('finds the framework files and their imports', () => {
    expect(files).to.include.members(['route.ts', 'gates.ts', 'subjects.ts', 'body.ts']);
    expect(importsOf(readFileSync(new URL('route.ts', HTTP), 'utf8'))).to.include('./subjects.ts');
  });

  for (const file of files) {
    it(`${file} imports nothing above the framework`, () => {
      const offending = importsOf(readFileSync(new URL(file, HTTP), 'utf8')).filter(upward);
      expect(offending, file).to.deep.equal([]);
    });
  }

  it('the check notices a domain import', () => {
    expect(importsOf("import type { Station } from '../domains/stations/model.ts';").filter(upward)).to.deep.equal([
      '../domains/stations/model.ts',
    ]);
    expect(importsOf("import { allRoutes } from '../routes.ts';").filter(upward)).to.deep.equal(['../routes.ts']);
    expect(importsOf("import type { Services } from '../services.ts';").filter(upward)).to.deep.equal(['../services.ts']);
  });
});

/** Every .ts file under `dir` (a URL ending in /), with its path relative to src/. */
function sourcesUnder(dir: URL): Array<{ file: string; source: string }> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: new URL(f, dir).pathname.slice(SRC.pathname.length), source: readFileSync(new URL(f, dir), 'utf8') }));
}

describe('layers: routes are gated by what they declare', () => {
  const above = [...sourcesUnder(new URL('domains/', SRC)), ...sourcesUnder(new URL('graphql/', SRC))];

  it('finds the domains and GraphQL', () => {
    expect(above.map((s) => s.file)).to.include.members(['domains/nowPlaying/routes.ts', 'domains/preview/routes.ts', 'graphql/routes.ts']);
  });

  it('no domain or GraphQL module runs a gate itself (station lookup, credential, rate limit)', () => {
    const byHand = above
      .filter(({ source }) => /http\/gates\.ts'|\bauthenticate\(|\brateLimits\.take\(|\bbearerToken\(/.test(source))
      .map((s) => s.file);
    expect(byHand).to.deep.equal([]);
  });

  it('the check notices a gate run by hand', () => {
    expect(/\bauthenticate\(/.test("await authenticate(svc, ctx, 'ingest:write', station.id);")).to.equal(true);
  });
});
