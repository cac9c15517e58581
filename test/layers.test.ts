import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { circlesOf, readImportGraph, specifiersOf, type ImportEdge } from './support/importGraph.ts';
import { arrowsTable, describeArrow, drawnArrows, folderLoops, unlisted, unused, type DrawnArrow } from './support/domainArrows.ts';

// The layers of docs/architecture.md ("Layers"), held against the import graph of src/ and workers/ as
// the files write it — type imports included: a type import is a dependency on the shape all the same.
// Each rule is one `it`; a failure lists the offending imports, file → file.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const graph = readImportGraph(ROOT, ['src', 'workers']);

const under =
  (...places: string[]) =>
  (file: string) =>
    places.some((place) => (place.endsWith('/') ? file.startsWith(place) : file === place));
const domainOf = (file: string): string | null => /^src\/domains\/([^/]+)\//.exec(file)?.[1] ?? null;
/** The entry points and the composition: the roles, the CLI, the route table, the worker role and its jobs. */
const rolesSide = under('src/roles/', 'src/main.ts', 'src/routes.ts', 'workers/');

function expectNone(offending: readonly ImportEdge[], rule: string): void {
  if (offending.length === 0) return;
  expect.fail(`${rule}; offending imports:\n${offending.map((edge) => `  ${edge.from} → ${edge.to}`).join('\n')}`);
}

const importsFrom = (from: (file: string) => boolean) => graph.edges.filter((edge) => from(edge.from));

describe('layers: the import graph of src/ and workers/', () => {
  it('the graph reader reads the real source (files, imports and packages)', () => {
    expect(graph.files.length).to.be.greaterThan(200);
    expect(graph.files).to.include.members(['src/http/route.ts', 'src/lib/readCache.ts', 'workers/index.ts']);
    expect(graph.edges).to.deep.include({ from: 'src/http/route.ts', to: 'src/http/subjects.ts', typeOnly: true });
    expect(graph.edges).to.deep.include({ from: 'src/roles/web.ts', to: 'src/roles/services.ts', typeOnly: false });
    expect(graph.packages).to.deep.include({ from: 'src/http/route.ts', to: 'koa', typeOnly: true });
  });

  it('no import circles', () => {
    const circles = circlesOf(graph.edges);
    if (circles.length > 0) expect.fail(`import circles:\n${circles.map((circle) => `  ${circle.join(' → ')}`).join('\n')}`);
  });

  it('src/lib imports nothing of src outside lib (only src/config.ts, and knexfile.ts for the migrations)', () => {
    const allowed = under('src/lib/', 'src/config.ts', 'knexfile.ts');
    expectNone(
      importsFrom(under('src/lib/')).filter((edge) => !allowed(edge.to)),
      'src/lib imports only src/lib, src/config.ts and knexfile.ts',
    );
  });

  it('src/http (the framework) imports no domain, GraphQL, gateway, roles, route table or services', () => {
    const allowed = under('src/http/', 'src/lib/', 'src/config.ts');
    expectNone(
      importsFrom(under('src/http/')).filter((edge) => !allowed(edge.to)),
      'src/http imports only src/http, src/lib and src/config.ts (domains reach it through http/subjects.ts)',
    );
  });

  it('src/domains/stations (the core) imports no other domain', () => {
    expectNone(
      importsFrom(under('src/domains/stations/')).filter((edge) => domainOf(edge.to) !== null && domainOf(edge.to) !== 'stations'),
      'src/domains/stations imports no other domain (features register their settings with it)',
    );
  });

  it('no domain imports the gateway, GraphQL or the roles side (src/roles, main.ts, routes.ts, workers/)', () => {
    const above = (file: string) => under('src/gateway/', 'src/graphql/')(file) || rolesSide(file);
    expectNone(
      importsFrom(under('src/domains/')).filter((edge) => above(edge.to)),
      'domains import no gateway, GraphQL or roles code',
    );
  });

  it('the services are built on the roles side alone (src/roles/ is imported only by src/main.ts, src/roles/ and workers/)', () => {
    expectNone(
      graph.edges.filter((edge) => edge.to.startsWith('src/roles/') && !under('src/roles/', 'src/main.ts', 'workers/')(edge.from)),
      'only the entry points import src/roles/',
    );
  });

  it('src/services.ts holds the service types only (every import is a type import)', () => {
    expectNone(
      [...importsFrom(under('src/services.ts')), ...graph.packages.filter((edge) => edge.from === 'src/services.ts')].filter(
        (edge) => !edge.typeOnly,
      ),
      'src/services.ts imports types only: the constructors are src/roles/services.ts',
    );
  });

  it('src/gateway imports no Koa, knex or HTTP framework, and the gateway role loads neither at run time', () => {
    const banned = (name: string) => name === 'koa' || name.startsWith('koa-') || name.startsWith('@koa/') || name === 'knex';
    const gateway = under('src/gateway/');
    expectNone(
      [
        ...graph.edges.filter((edge) => gateway(edge.from) && edge.to.startsWith('src/http/')),
        ...graph.packages.filter((edge) => gateway(edge.from) && banned(edge.to)),
      ],
      'src/gateway imports no koa, @koa/*, knex or src/http',
    );
    // What the gateway process loads: run-time imports only, from its entry (test/gateway/imports.test.ts
    // asserts the same for the packages).
    const loaded = new Set(['src/roles/gateway.ts']);
    for (let grew = true; grew;) {
      grew = false;
      for (const edge of graph.edges) {
        if (edge.typeOnly || !loaded.has(edge.from) || loaded.has(edge.to)) continue;
        loaded.add(edge.to);
        grew = true;
      }
    }
    expect([...loaded]).to.include('src/gateway/server.ts');
    expectNone(
      graph.packages.filter((edge) => !edge.typeOnly && loaded.has(edge.from) && banned(edge.to)),
      'the gateway role loads no koa, @koa/* or knex at run time',
    );
  });

  it('src/feed and src/jobs.ts import no domain (only src/lib, src/config.ts and each other)', () => {
    const allowed = under('src/lib/', 'src/config.ts', 'src/feed/', 'src/jobs.ts');
    expectNone(
      importsFrom(under('src/feed/', 'src/jobs.ts')).filter((edge) => !allowed(edge.to)),
      'src/feed and src/jobs.ts import only src/lib, src/config.ts, src/feed and src/jobs.ts',
    );
  });
});

// The arrows between domain folders: the table of docs/architecture.md ("Where a domain needs another"),
// read from the page itself, so the page and the test cannot drift apart.
const ARROWS_PAGE = 'docs/architecture.md';
const ARROWS_HEADING = 'Where a domain needs another';
const table = arrowsTable(readFileSync(join(ROOT, ARROWS_PAGE), 'utf8'), ARROWS_HEADING);
const drawn = drawnArrows(graph.edges, domainOf);
const where = `${ARROWS_PAGE} ("${ARROWS_HEADING}")`;

describe('layers: arrows between domain folders (src/domains/<folder>/, subfolders included)', () => {
  it(`reads the table of ${where}: its arrows name domain folders`, () => {
    const folders = readdirSync(join(ROOT, 'src/domains'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(table).to.deep.include({ from: 'admin', to: 'auth' });
    const unknown = table.filter((arrow) => !folders.includes(arrow.from) || !folders.includes(arrow.to));
    if (unknown.length)
      expect.fail(
        `rows of the table in ${where} name no folder of src/domains (renamed or moved?):\n${unknown.map((a) => `  ${a.from} → ${a.to}`).join('\n')}`,
      );
  });

  it(`every import between two domain folders is an arrow the table of ${where} lists (any domain may import stations, the core)`, () => {
    const offending = unlisted(drawn, table, ['stations']);
    if (offending.length)
      expect.fail(
        `imports between domain folders that the table in ${where} does not list; add a row (| from → to | what it takes | why |) ` +
          `if the arrow is meant, or remove the imports:\n${offending.map((arrow) => describeArrow(arrow)).join('\n')}`,
      );
  });

  it(`every arrow the table of ${where} lists is drawn by some import`, () => {
    const stale = unused(table, drawn);
    if (stale.length)
      expect.fail(
        `arrows in the table in ${where} that no import draws any more; remove them from their rows (after a move, ` +
          `the arrow may have turned round or gone to another folder):\n${stale.map((a) => `  ${a.from} → ${a.to}`).join('\n')}`,
      );
  });

  it('no loop between domain folders, whether or not the table lists each arrow', () => {
    const loops = folderLoops(drawn);
    if (loops.length) expect.fail(loopsMessage(loops, drawn));
  });
});

/** Each loop, then the imports behind each of its arrows. */
function loopsMessage(loops: string[][], drawnArrows: readonly DrawnArrow[]): string {
  const lines = ['loops between domain folders (a lower domain imports an upper one back; move what both need to the lower one):'];
  for (const loop of loops) {
    lines.push(`  ${loop.join(' → ')}`);
    for (let i = 0; i + 1 < loop.length; i++) {
      const arrow = drawnArrows.find((a) => a.from === loop[i] && a.to === loop[i + 1])!;
      lines.push(describeArrow(arrow, '    '));
    }
  }
  return lines.join('\n');
}

describe('layers: the domain arrows checker', () => {
  const page = [
    '# A page',
    '## Where a domain needs another',
    'Some prose.',
    '',
    '| arrow | what it takes | why |',
    '|---|---|---|',
    '| `schedule` → artwork | images | programs show one |',
    '| artwork → nowPlaying, media | types | art of tracks |',
    '| content, nowPlaying → schedule | the on-air row | both read it |',
    '',
    '## Another heading',
    '| x → y | | |',
  ].join('\n');
  const edge = (from: string, to: string): ImportEdge => ({ from: `src/domains/${from}`, to: `src/domains/${to}`, typeOnly: false });
  const folder = (file: string) => /^src\/domains\/([^/]+)\//.exec(file)?.[1] ?? null;

  it('reads every arrow of the table under its heading (lists on either side, backticks), and nothing after it', () => {
    expect(arrowsTable(page, 'Where a domain needs another')).to.deep.equal([
      { from: 'schedule', to: 'artwork' },
      { from: 'artwork', to: 'nowPlaying' },
      { from: 'artwork', to: 'media' },
      { from: 'content', to: 'schedule' },
      { from: 'nowPlaying', to: 'schedule' },
    ]);
    expect(() =>
      arrowsTable(page.replace('| artwork → nowPlaying, media |', '| artwork and media |'), 'Where a domain needs another'),
    ).to.throw(/names no arrow/);
    expect(() => arrowsTable(page, 'Elsewhere')).to.throw(/no "## Elsewhere" heading/);
  });

  it('finds an import no row allows, with its files, and a row no import draws', () => {
    const drawnHere = drawnArrows(
      [edge('schedule/commands.ts', 'artwork/images.ts'), edge('media/a.ts', 'artwork/b.ts'), edge('media/a.ts', 'media/c.ts')],
      folder,
    );
    const tableHere = arrowsTable(page, 'Where a domain needs another');
    expect(unlisted(drawnHere, tableHere).map((a) => `${a.from} → ${a.to}`)).to.deep.equal(['media → artwork']);
    expect(describeArrow(unlisted(drawnHere, tableHere)[0])).to.equal(
      '  media → artwork\n    src/domains/media/a.ts → src/domains/artwork/b.ts',
    );
    expect(unused(tableHere, drawnHere).map((a) => `${a.from} → ${a.to}`)).to.deep.equal([
      'artwork → nowPlaying',
      'artwork → media',
      'content → schedule',
      'nowPlaying → schedule',
    ]);
  });

  it('finds a folder loop even when the table lists every one of its arrows', () => {
    const drawnHere = drawnArrows(
      [
        edge('schedule/commands.ts', 'artwork/images.ts'),
        edge('artwork/images.ts', 'nowPlaying/model.ts'),
        edge('nowPlaying/live.ts', 'schedule/onair.ts'),
        edge('content/a.ts', 'schedule/onair.ts'),
      ],
      folder,
    );
    expect(unlisted(drawnHere, arrowsTable(page, 'Where a domain needs another'))).to.deep.equal([]);
    const loops = folderLoops(drawnHere);
    expect(loops).to.deep.equal([['artwork', 'nowPlaying', 'schedule', 'artwork']]);
    expect(loopsMessage(loops, drawnHere))
      .to.include('artwork → nowPlaying → schedule → artwork')
      .and.include('      src/domains/nowPlaying/live.ts → src/domains/schedule/onair.ts');
  });

  it('finds no folder loop where the arrows run one way, nor from imports inside one folder', () => {
    const drawnHere = drawnArrows(
      [edge('schedule/a.ts', 'artwork/b.ts'), edge('artwork/b.ts', 'artwork/c.ts'), edge('artwork/c.ts', 'artwork/b.ts')],
      folder,
    );
    expect(folderLoops(drawnHere)).to.deep.equal([]);
  });
});

describe('layers: the graph reader', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'waveline-layers-'));
    mkdirSync(join(dir, 'src'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds a planted circle, type import included, and names its files', () => {
    writeFileSync(join(dir, 'src/a.ts'), "import { b } from './b.ts';\nexport const a = (): number => b + 1;\n");
    writeFileSync(join(dir, 'src/b.ts'), "import type { A } from './a.ts';\nexport const b = 1;\nexport type B = A;\n");
    writeFileSync(join(dir, 'src/c.ts'), "import { a } from './a.ts';\nexport const c = a;\n");
    const planted = readImportGraph(dir, ['src']);
    expect(planted.files).to.have.members(['src/a.ts', 'src/b.ts', 'src/c.ts']);
    expect(circlesOf(planted.edges)).to.deep.equal([['src/a.ts', 'src/b.ts', 'src/a.ts']]);
  });

  it('finds no circle where the arrows run one way', () => {
    writeFileSync(join(dir, 'src/a.ts'), "import { b } from './b.ts';\nexport const a = b;\n");
    writeFileSync(join(dir, 'src/b.ts'), 'export const b = 1;\n');
    expect(circlesOf(readImportGraph(dir, ['src']).edges)).to.deep.equal([]);
  });

  it('reads every form of import, and none in a comment or a template literal', () => {
    const source = [
      "import type { A } from './a.ts';",
      "import {\n  b,\n  type B,\n} from './b.ts';",
      "export { c } from './c.ts';",
      "export type { D } from './d.ts';",
      "export * from './e.ts';",
      "import './f.ts';",
      "const g = await import('./g.ts');",
      "declare module './h.ts' {\n  interface H {}\n}",
      "// import { no } from './comment.ts';",
      "/* import { no } from './block.ts'; */",
      "const page = `\nimport { no } from './template.ts';\n`;",
      "export const i = 'from';",
    ].join('\n');
    expect(specifiersOf(source)).to.have.deep.members([
      { spec: './a.ts', typeOnly: true },
      { spec: './b.ts', typeOnly: false },
      { spec: './c.ts', typeOnly: false },
      { spec: './d.ts', typeOnly: true },
      { spec: './e.ts', typeOnly: false },
      { spec: './f.ts', typeOnly: false },
      { spec: './g.ts', typeOnly: false },
      { spec: './h.ts', typeOnly: true },
    ]);
  });
});
