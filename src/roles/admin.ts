import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.ts';
import { createLogger } from '../lib/logger.ts';
import { generateToken } from '../lib/tokens.ts';
import { createServices } from '../services.ts';
import { startWeb } from './web.ts';
import { migrate } from './migrate.ts';
import { openEmbedded } from '../lib/embedded/index.ts';

const USAGE = `usage: waveline admin <METHOD> <PATH> [JSON | @file.json]

Runs one admin API call in-process against DATABASE_URL/REDIS_URL (no running web needed) and prints
the JSON answer. PATH is relative to /admin/v1, e.g.:

  waveline admin POST /stations '{"slug":"radio-one","name":"Radio One","timezone":"Europe/Berlin"}'
  waveline admin POST /stations/st_…/credentials '{"scopes":["listener:read"]}'
  waveline admin PATCH /stations/st_… '{"publicOnline":false}'
  waveline admin POST /import @bundle.json
`;

/** `waveline admin …`: the admin API from the command line, through the very same routes. */
export async function run(baseConfig: Readonly<Config>): Promise<void> {
  const [method, path, payload] = process.argv.slice(3);
  if (!method || !path || !/^(GET|POST|PUT|PATCH|DELETE)$/i.test(method)) {
    process.stderr.write(USAGE);
    process.exit(64);
  }
  // A one-off operator token for this process only, so the CLI needs no secret of its own.
  const embedded = await openEmbedded(baseConfig);
  const config = Object.freeze({ ...embedded.config, adminToken: generateToken() });
  const logger = createLogger({ ...config, logLevel: 'warn' }, 'admin');
  await migrate(config);
  const svc = await createServices(config, logger);
  const web = await startWeb(svc, 0, logger);
  try {
    const { port } = web.server.address() as AddressInfo;
    const body = payload === undefined ? undefined : payload.startsWith('@') ? readFileSync(payload.slice(1), 'utf8') : payload;
    const res = await fetch(`http://127.0.0.1:${port}/admin/v1${path.startsWith('/') ? path : `/${path}`}`, {
      method: method.toUpperCase(),
      headers: { authorization: `Bearer ${config.adminToken}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body,
    });
    const text = await res.text();
    process.stdout.write(`${text || `(${res.status})`}\n`);
    process.exitCode = res.ok ? 0 : 1;
  } finally {
    await web.close();
    await svc.close();
    await embedded.close();
  }
}
