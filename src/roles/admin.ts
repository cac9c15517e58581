// Every feature's station setting is registered before anything builds the station schemas.
import '../features.ts';
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.ts';
import { createLogger } from '../lib/logger.ts';
import { generateToken } from '../lib/tokens.ts';
import { createWebServices } from './services.ts';
import { startWeb } from './web.ts';
import { migrate } from './migrate.ts';
import { openEmbedded } from '../lib/embedded/index.ts';

const USAGE = `usage: waveline admin [--key wvo_…] <METHOD> <PATH> [JSON | @file.json]

Runs one admin API call in-process against DATABASE_URL/REDIS_URL (no running web needed) and prints
the JSON answer. The call is made with an operator key (--key, or WAVELINE_ADMIN_KEY), else with the
root key (WAVELINE_ADMIN_TOKEN, or a one-off root key of this process when none is set); it is
audited under that key. PATH is relative to /admin/v1, e.g.:

  waveline admin POST /stations '{"slug":"radio-one","name":"Radio One","timezone":"Europe/Berlin"}'
  waveline admin POST /stations/st_…/credentials '{"scopes":["listener:read"]}'
  waveline admin PATCH /stations/st_… '{"publicOnline":false}'
  waveline admin POST /import @bundle.json
  waveline admin POST /stations/st_…/webhooks '{"url":"https://example.org/hooks/waveline","events":["now-playing.changed"]}'
  waveline admin GET /stations/st_…/webhooks/<id>/deliveries
  waveline admin GET '/stations/st_…/plays?from=2026-10-01T00:00:00Z&to=2026-11-01T00:00:00Z&format=csv' > plays.csv

A CSV answer (the play log) is streamed to stdout as it arrives. Operator keys: see \`waveline keys\`.
`;

/** `--key <value>` anywhere in `args` (removed), else WAVELINE_ADMIN_KEY; undefined for the root key. */
export function takeKey(args: string[]): string | undefined {
  const at = args.indexOf('--key');
  if (at >= 0) return args.splice(at, 2)[1];
  return process.env.WAVELINE_ADMIN_KEY || undefined;
}

/** `waveline admin …`: the admin API from the command line, through the very same routes. */
export async function run(baseConfig: Readonly<Config>): Promise<void> {
  const args = process.argv.slice(3);
  const key = takeKey(args);
  const [method, path, payload] = args;
  if (!method || !path || !/^(GET|POST|PUT|PATCH|DELETE)$/i.test(method)) {
    process.stderr.write(USAGE);
    process.exit(64);
  }
  await adminCall(baseConfig, { method, path, payload, key });
}

/** One admin API call through the very same routes, in this process; prints the answer. */
export async function adminCall(
  baseConfig: Readonly<Config>,
  call: { method: string; path: string; payload?: string; key?: string },
): Promise<void> {
  const { method, path, payload } = call;
  // Without WAVELINE_ADMIN_TOKEN, a one-off root key for this process only, so the CLI needs no secret of its own.
  const embedded = await openEmbedded(baseConfig);
  const config = Object.freeze({ ...embedded.config, adminToken: embedded.config.adminToken || generateToken() });
  const bearer = call.key ?? config.adminToken;
  // Log lines go to stderr: stdout is the answer (JSON, or a CSV an operator redirects into a file).
  const logger = createLogger({ ...config, logLevel: 'warn' }, 'admin', pino.destination(2));
  await migrate(config);
  const svc = await createWebServices(config, logger);
  const web = await startWeb(svc, 0, logger);
  try {
    const { port } = web.server.address() as AddressInfo;
    const body = payload === undefined ? undefined : payload.startsWith('@') ? readFileSync(payload.slice(1), 'utf8') : payload;
    const res = await fetch(`http://127.0.0.1:${port}/admin/v1${path.startsWith('/') ? path : `/${path}`}`, {
      method: method.toUpperCase(),
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body,
    });
    process.exitCode = res.ok ? 0 : 1;
    if (res.ok && res.body && (res.headers.get('content-type') ?? '').startsWith('text/csv')) {
      // A month of plays never sits whole in this process either.
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
      }
      return;
    }
    const text = await res.text();
    process.stdout.write(`${text || `(${res.status})`}\n`);
  } finally {
    await web.close();
    await svc.close();
    await embedded.close();
  }
}
