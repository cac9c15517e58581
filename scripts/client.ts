// The typed client in client/ is generated from /openapi.json:
//   npm run client:generate   writes client/openapi.json and client/src/schema.d.ts
//   npm run client:check      regenerates into a temporary folder and fails when the committed files differ
// Rerun `client:generate` after adding or changing a route (or after a merge that did) and commit both files.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApi } from '../src/http/openapi.ts';
import { allRoutes } from '../src/routes.ts';
import { API_VERSION } from '../src/domains/system/routes.ts';

const root = new URL('..', import.meta.url).pathname;
const client = join(root, 'client');
const FILES = ['openapi.json', 'src/schema.d.ts'] as const;

function generate(into: string): void {
  // client/ is an npm workspace of the root package: the root's one `npm ci` installs its generator
  // (openapi-typescript, on TypeScript 5 in client/node_modules) with everything else.
  if (!existsSync(join(client, 'node_modules/.bin/openapi-typescript'))) {
    throw new Error('client/node_modules/.bin/openapi-typescript is missing: run `npm ci` at the repository root');
  }
  const spec = join(into, 'openapi.json');
  writeFileSync(
    spec,
    JSON.stringify(buildOpenApi(allRoutes, { version: API_VERSION, serverUrl: 'http://localhost:3000' }), null, 2) + '\n',
  );
  execFileSync(
    join(client, 'node_modules/.bin/openapi-typescript'),
    [spec, '--default-non-nullable', 'false', '--output', join(into, 'src/schema.d.ts')],
    { cwd: client, stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

if (process.argv.includes('--check')) {
  const temp = mkdtempSync(join(tmpdir(), 'waveline-client-'));
  try {
    generate(temp);
    const stale = FILES.filter(
      (file) => !existsSync(join(client, file)) || readFileSync(join(temp, file), 'utf8') !== readFileSync(join(client, file), 'utf8'),
    );
    if (stale.length) {
      console.error(`client/ is out of date with the routes (${stale.join(', ')}): run \`npm run client:generate\` and commit the result.`);
      process.exit(1);
    }
    console.log('client/ is up to date with /openapi.json');
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
} else {
  generate(client);
  console.log(`wrote ${FILES.map((file) => `client/${file}`).join(' and ')}`);
}
