import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

// docs/architecture.md, "File names": every TypeScript or JavaScript module is named in camelCase,
// except migrations and the widget served under its own name.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CAMEL = /^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)*\.(ts|js|mjs|cjs)$/;
const EXCEPTIONS = new Set(['src/domains/embed/now-playing.js']);

function offenders(paths: string[]): string[] {
  return paths.filter(
    (path) =>
      /\.(ts|js|mjs|cjs)$/.test(path) && !path.startsWith('migrations/') && !EXCEPTIONS.has(path) && !CAMEL.test(path.split('/').pop()!),
  );
}

describe('file names', () => {
  it('every module in the repository is camelCase (docs/architecture.md)', () => {
    const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(tracked.length).to.be.greaterThan(100);
    expect(offenders(tracked)).to.deep.equal([]);
  });

  it('the rule refuses kebab-case, snake_case and a capital first letter', () => {
    expect(
      offenders([
        'src/a/admin-routes.ts',
        'src/a/admin_routes.ts',
        'src/a/AdminRoutes.ts',
        'src/a/adminRoutes.ts',
        'test/x/readCache.test.ts',
        'migrations/20260101_init.ts',
      ]),
    ).to.deep.equal(['src/a/admin-routes.ts', 'src/a/admin_routes.ts', 'src/a/AdminRoutes.ts']);
  });
});
