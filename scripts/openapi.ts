// Writes /openapi.json as the web role serves it, without starting anything: what the typed client
// (client/) is generated from and what `npm run lint:openapi` checks.
//   node scripts/openapi.ts [out.json] [serverUrl]
import { writeFileSync } from 'node:fs';
import { buildOpenApi } from '../src/http/openapi.ts';
import { allRoutes } from '../src/routes.ts';
import { API_VERSION } from '../src/domains/system/routes.ts';

const [out = 'client/openapi.json', serverUrl = 'http://localhost:3000'] = process.argv.slice(2);
writeFileSync(out, JSON.stringify(buildOpenApi(allRoutes, { version: API_VERSION, serverUrl }), null, 2) + '\n');
