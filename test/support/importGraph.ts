import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// The import graph of the source, read from the files themselves (test/layers.test.ts holds it to the
// layers of docs/architecture.md). Every way one file names another counts: `import` and `import type`
// (a type import is a dependency on the shape all the same), `export … from`, `import()`, and a
// `declare module '…'` augmentation. A small scanner, not the compiler: TypeScript 7 has no JS API, and
// the project writes its imports one way (relative, with their `.ts` extension).

/** One file naming another: `from` and `to` relative to the root, or `to` a package name. */
export interface ImportEdge {
  from: string;
  to: string;
  /** `import type …`, `export type … from`, `declare module`: gone at run time. */
  typeOnly: boolean;
}

export interface ImportGraph {
  /** Every source file read, relative to the root. */
  files: string[];
  /** Imports of other files (relative specifiers), resolved. */
  edges: ImportEdge[];
  /** Imports of packages (`koa`, `@koa/router`, `node:fs`), by package name. */
  packages: ImportEdge[];
}

/** The source with its comments and template literals blanked: an `import` in either is no import. */
function codeOf(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end === -1 ? source.length : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === '`') {
      let j = i + 1;
      while (j < source.length && source[j] !== '`') j += source[j] === '\\' ? 2 : 1;
      out += ' ' + source.slice(i + 1, j).replace(/[^\n]/g, ' ') + ' ';
      i = j + 1;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const STATEMENTS = [
  // import x from '…'; import { a, type b } from '…'; import type { T } from '…'; import * as m from '…'; import '…'
  /^[ \t]*import\s+(type\s+)?(?:[\w$*{][^'";]*?\sfrom\s*)?['"]([^'"\n]+)['"]/gm,
  // export { a } from '…'; export type { T } from '…'; export * from '…'
  /^[ \t]*export\s+(type\s+)?(?:\*|\{)[^'";]*?\sfrom\s*['"]([^'"\n]+)['"]/gm,
  // declare module '…' { … }: augmenting a module depends on its types
  /^[ \t]*declare\s+(module)\s+['"]([^'"\n]+)['"]/gm,
];
const DYNAMIC = /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g;

/** The module specifiers a source names, each with whether only types are taken. */
export function specifiersOf(source: string): Array<{ spec: string; typeOnly: boolean }> {
  const code = codeOf(source);
  const found: Array<{ spec: string; typeOnly: boolean }> = [];
  for (const pattern of STATEMENTS) {
    for (const match of code.matchAll(pattern)) found.push({ spec: match[2], typeOnly: Boolean(match[1]) });
  }
  for (const match of code.matchAll(DYNAMIC)) found.push({ spec: match[1], typeOnly: false });
  return found;
}

const packageOf = (spec: string): string => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

/** The `.ts` files under `dirs` (relative to `root`), their imports resolved against the disk. */
export function readImportGraph(root: string, dirs: readonly string[]): ImportGraph {
  const files = dirs.flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => join(dir, file)),
  );
  const edges: ImportEdge[] = [];
  const packages: ImportEdge[] = [];
  for (const from of files.sort()) {
    for (const { spec, typeOnly } of specifiersOf(readFileSync(join(root, from), 'utf8'))) {
      if (spec.startsWith('.')) {
        const target = resolve(root, dirname(from), spec);
        if (!existsSync(target)) throw new Error(`${from} imports ${spec}, which is no file`);
        edges.push({ from, to: relative(root, target), typeOnly });
      } else {
        packages.push({ from, to: packageOf(spec), typeOnly });
      }
    }
  }
  return { files, edges, packages };
}

/**
 * The import circles: one per group of files that reach each other (Tarjan's strongly connected
 * components), each as a path through its files that ends where it starts (`a → b → a`).
 */
export function circlesOf(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (!next.has(from)) next.set(from, []);
    if (!next.get(from)!.includes(to)) next.get(from)!.push(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file)!, index.get(to)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || (next.get(file) ?? []).includes(file)) groups.push(group);
  };
  for (const file of [...next.keys()].sort()) if (!index.has(file)) visit(file);
  return groups.map((group) => loopThrough(group.sort(), next));
}

/** The shortest way from the group's first file back to itself, staying inside the group. */
function loopThrough(group: string[], next: Map<string, string[]>): string[] {
  const start = group[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const to of next.get(file) ?? []) {
      if (!group.includes(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at = file; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, file);
        queue.push(to);
      }
    }
  }
  return group;
}
