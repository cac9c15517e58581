import { circlesOf, type ImportEdge } from './importGraph.ts';

// The arrows between domain folders (docs/architecture.md, "Where a domain needs another"): the table
// of allowed arrows as that page writes it, the arrows the imports draw, and the loops between folders.
// test/layers.test.ts holds the source to the page with these.

/** One arrow between two domain folders. */
export interface Arrow {
  from: string;
  to: string;
}

/** An arrow the imports draw, with the imports behind it (file → file). */
export interface DrawnArrow extends Arrow {
  imports: ImportEdge[];
}

const name = (arrow: Arrow) => `${arrow.from} → ${arrow.to}`;

/**
 * The arrows of the first table under the `## {heading}` of a Markdown page. A row's first cell is
 * `a, b → c, d` (names may be in backticks): an arrow from every name on the left to every name on the
 * right. Throws, saying where, when the heading, the table or an arrow is missing.
 */
export function arrowsTable(markdown: string, heading: string): Arrow[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === `## ${heading}`);
  if (start === -1) throw new Error(`no "## ${heading}" heading`);
  const section = lines.slice(start + 1);
  const end = section.findIndex((line) => line.startsWith('## '));
  const body = end === -1 ? section : section.slice(0, end);
  const first = body.findIndex((line) => line.trimStart().startsWith('|'));
  if (first === -1) throw new Error(`no table under "## ${heading}"`);
  const rows = body.slice(first);
  const after = rows.findIndex((line) => !line.trimStart().startsWith('|'));
  const table = after === -1 ? rows : rows.slice(0, after);
  const arrows: Arrow[] = [];
  // The header row and the |---| row first.
  for (const row of table.slice(2)) {
    const cell = row.trim().replace(/^\|/, '').split('|')[0].replace(/`/g, '');
    const sides = cell.split('→');
    if (sides.length !== 2) throw new Error(`a row of the table under "## ${heading}" names no arrow "from → to": ${row.trim()}`);
    const [left, right] = sides.map((side) =>
      side
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean),
    );
    for (const from of left) for (const to of right) arrows.push({ from, to });
  }
  return arrows;
}

/** The arrows between folders that the imports draw (an import within one folder draws none), in name order. */
export function drawnArrows(edges: readonly ImportEdge[], folderOf: (file: string) => string | null): DrawnArrow[] {
  const arrows = new Map<string, DrawnArrow>();
  for (const edge of edges) {
    const from = folderOf(edge.from);
    const to = folderOf(edge.to);
    if (from === null || to === null || from === to) continue;
    const key = name({ from, to });
    if (!arrows.has(key)) arrows.set(key, { from, to, imports: [] });
    arrows.get(key)!.imports.push(edge);
  }
  return [...arrows.values()].sort((a, b) => name(a).localeCompare(name(b)));
}

/** The drawn arrows no row of the table allows (`open`: folders every folder may import). */
export function unlisted(drawn: readonly DrawnArrow[], table: readonly Arrow[], open: readonly string[] = []): DrawnArrow[] {
  const allowed = new Set(table.map(name));
  return drawn.filter((arrow) => !open.includes(arrow.to) && !allowed.has(name(arrow)));
}

/** The arrows of the table no import draws. */
export function unused(table: readonly Arrow[], drawn: readonly Arrow[]): Arrow[] {
  const used = new Set(drawn.map(name));
  return table.filter((arrow) => !used.has(name(arrow)));
}

/** The loops between folders, each as a path that ends where it starts (`a → b → a`); the table plays no part. */
export function folderLoops(drawn: readonly Arrow[]): string[][] {
  return circlesOf(drawn.map(({ from, to }) => ({ from, to, typeOnly: false })));
}

/** A drawn arrow with the imports behind it (a type import marked), for a failure message. */
export function describeArrow(arrow: DrawnArrow, indent = '  '): string {
  return [
    `${indent}${name(arrow)}`,
    ...arrow.imports.map((edge) => `${indent}  ${edge.from} → ${edge.to}${edge.typeOnly ? ' (types)' : ''}`),
  ].join('\n');
}
