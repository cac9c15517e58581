// npm run bench:admin — what the audit trail costs an admin write: p50/p99 of a record publish
// (POST /admin/v1/stations/{id}/records/{uuid}/publish, root key) with its audit entry, beside the same
// publish on a second web app in the same process whose audit log stores nothing (the bench's baseline
// only: there is no switch for it in the product). Requests alternate between the two apps, so both see
// the same machine. It also counts the SQL statements each publish sends (knex `query` events): the
// entry is one INSERT inside the publish's own transaction, i.e. one round trip more.
//
// Uses its own database (BENCH_DATABASE_URL, default waveline_bench_admin, recreated on every run) and
// Redis index (BENCH_REDIS_URL, default index 14).
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/lib/logger.ts';
import { migrate } from '../src/roles/migrate.ts';
import { createWebServices } from '../src/roles/services.ts';
import type { WebServices } from '../src/services.ts';
import { startWeb } from '../src/roles/web.ts';
import { BENCH_ENV, recreateDatabase, summary } from './support.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_admin';
Object.assign(process.env, {
  ...BENCH_ENV,
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14',
  LOG_LEVEL: 'warn',
  PORT: '0',
});

const config = loadConfig();
await recreateDatabase(databaseUrl);
await migrate(config);
const logger = createLogger(config, 'bench');
const svc = await createWebServices(config, logger);
const baselineSvc: WebServices = { ...svc, audit: { record: async () => undefined } as unknown as WebServices['audit'] };
const audited = await startWeb(svc, 0, logger);
const baseline = await startWeb(baselineSvc, 0, logger);
const urlOf = (web: typeof audited) => `http://127.0.0.1:${(web.server.address() as AddressInfo).port}`;
const apps = { audited: urlOf(audited), baseline: urlOf(baseline) };

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const station = (await call(apps.audited, 'POST', '/admin/v1/stations', { slug: 'bench-admin-fm', name: 'Bench FM', timezone: 'UTC' }))
  .json;
await call(apps.audited, 'PUT', `/admin/v1/stations/${station.id}/content-types/news`, {
  label: 'News',
  fields: [{ key: 'title', label: 'Title', kind: 'text', required: true }],
});
const records = `/admin/v1/stations/${station.id}/records`;

let statements = 0;
svc.db.on('query', () => statements++);

/** One publish of a fresh revision on `app`: its latency (ms) and the statements it sent. */
async function publishOnce(app: string, i: number): Promise<{ ms: number; statements: number }> {
  const id = crypto.randomUUID();
  const saved = await call(app, 'PUT', `${records}/${id}`, { type: 'news', values: { title: `Story ${i}` } });
  if (saved.status !== 200) throw new Error(`save: ${saved.status} ${JSON.stringify(saved.json)}`);
  const before = statements;
  const start = performance.now();
  const published = await call(app, 'POST', `${records}/${id}/publish`);
  const ms = performance.now() - start;
  if (published.status !== 200) throw new Error(`publish: ${published.status} ${JSON.stringify(published.json)}`);
  return { ms, statements: statements - before };
}

// Warm both apps (caches, prepared plans), then alternate.
for (let i = 0; i < 20; i++) await publishOnce(i % 2 ? apps.audited : apps.baseline, i);
const figures = { audited: [] as number[], baseline: [] as number[] };
// The fewest statements a publish sent (a webhook-subscription cache refill now and then adds one to either).
const counts = { audited: Infinity, baseline: Infinity };
for (let i = 0; i < 2 * SAMPLES; i++) {
  const which = i % 2 ? 'audited' : 'baseline';
  const { ms, statements: sent } = await publishOnce(apps[which], i);
  figures[which].push(ms);
  counts[which] = Math.min(counts[which], sent);
}
const entries = await svc.db('audit_log').where({ action: 'content.publish' }).count<{ count: number }[]>('* as count');

const audit = summary(figures.audited);
const bare = summary(figures.baseline);
console.log(`bench:admin — record publish, ${SAMPLES} per app, alternating (ms)`);
console.log(`  without audit entry  p50 ${bare.p50}  p90 ${bare.p90}  p99 ${bare.p99}  statements ${counts.baseline}`);
console.log(`  with audit entry     p50 ${audit.p50}  p90 ${audit.p90}  p99 ${audit.p99}  statements ${counts.audited}`);
console.log(
  `  ratio p50 ${(audit.p50 / bare.p50).toFixed(2)}  p99 ${(audit.p99 / bare.p99).toFixed(2)}; publish entries stored: ${entries[0].count}`,
);

await audited.close();
await baseline.close();
await svc.close();
