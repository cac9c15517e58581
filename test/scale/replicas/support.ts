import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { loadConfig } from '../../../src/config.ts';
import { recreateDatabase } from '../../../src/lib/migrate.ts';
import { parseLsn } from '../../../src/lib/replicas/routing.ts';
import { migrate } from '../../../src/roles/migrate.ts';
import { eventually } from '../../support/factories.ts';
import { freePort } from '../../support/ports.ts';
import { repoRoot } from '../../support/processes.ts';
import { request } from '../../support/http.ts';

// The replica tests' Postgres: a primary and a streaming replica of our own (scripts/pg-replica.sh,
// started here too, so `npm run test:scale` works alone), the replica replaying every change 2 s late.
// Their database lives on that primary (the root hooks' test database is on the machine's Postgres,
// which has no replica); the Redis is the run's own (TEST_REDIS_URL, flushed by the root hooks).

export const PRIMARY_PORT = Number(process.env.PG_REPLICA_PRIMARY_PORT ?? 5440);
export const REPLICA_PORT = Number(process.env.PG_REPLICA_PORT ?? 5441);
const DATABASE = 'waveline_replicas';
export const primaryUrl = `postgres://postgres@127.0.0.1:${PRIMARY_PORT}/${DATABASE}`;
export const replicaUrl = `postgres://postgres@127.0.0.1:${REPLICA_PORT}/${DATABASE}`;

export function pgReplica(command: 'start' | 'stop-replica' | 'status'): string {
  return execFileSync('bash', ['scripts/pg-replica.sh', command], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** One statement on a server, with a connection of its own. */
export async function sql<R extends pg.QueryResultRow = Record<string, unknown>>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Waits until the replica has replayed everything the primary has written so far. */
export async function replicaCaughtUp(timeoutMs = 20_000): Promise<void> {
  const [{ lsn }] = await sql<{ lsn: string }>(primaryUrl, 'SELECT pg_current_wal_insert_lsn()::text AS lsn');
  const target = parseLsn(lsn);
  await eventually(
    async () => {
      const [row] = await sql<{ replay: string }>(replicaUrl, 'SELECT pg_last_wal_replay_lsn()::text AS replay');
      return parseLsn(row.replay) >= target;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** Starts the primary and replica, and a fresh, migrated database on them (the replica has it when this returns). */
export async function prepareReplicatedDatabase(): Promise<void> {
  pgReplica('start');
  await recreateDatabase(primaryUrl);
  await migrate({ ...loadConfig(), databaseUrl: primaryUrl });
  await eventually(() => sql(replicaUrl, 'SELECT 1').then(() => true), { timeoutMs: 20_000, intervalMs: 100 });
  await replicaCaughtUp();
}

export interface Role {
  name: string;
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<number | null>;
}

/** A role (`web`, `worker`, `gateway`) as its own process on the replicated database, ready when this returns. */
export async function startRole(role: 'web' | 'worker' | 'gateway', name: string, env: Record<string, string> = {}): Promise<Role> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts', role], {
    cwd: repoRoot,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      WORKER_PORT: String(port),
      DATABASE_URL: primaryUrl,
      DATABASE_REPLICA_URLS: replicaUrl,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => (await fetch(`${url}/${role === 'gateway' ? 'healthz' : 'readyz'}`)).ok, {
    timeoutMs: 30_000,
    intervalMs: 100,
  }).catch((err: unknown) => {
    throw new Error(`${name} did not become ready: ${String(err)}\n${out}`);
  });
  return { name, child, url, output: () => out, exited };
}

export async function stopRoles(roles: Array<Role | undefined>): Promise<void> {
  for (const role of roles) {
    if (!role || role.child.exitCode !== null || role.child.signalCode !== null) continue;
    role.child.kill('SIGTERM');
    await role.exited;
  }
}

/** The sum of a metric's samples whose labels include `labels` (0 when none). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((label) => line.includes(label))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export const metricsOf = async (role: Role): Promise<string> => (await request(role.url, 'GET', '/metrics')).text;

/** Listener reads by target (and reason) so far, from a web process' /metrics. */
export async function readsOf(role: Role, target: 'primary' | 'replica', reason?: string): Promise<number> {
  return sample(await metricsOf(role), 'waveline_db_reads_total', reason ? { target, reason } : { target });
}
