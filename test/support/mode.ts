// Which adapters the suite runs on (docs/embedded.md, "Tests"):
// - `services`: Postgres and Redis servers (TEST_DATABASE_URL / TEST_REDIS_URL, or the local defaults);
// - `embedded`: PGlite served over its socket in a temporary directory, and the in-process adapters.
// WAVELINE_TEST_MODE chooses; unset, a run given TEST_* URLs is `services`, and otherwise the local
// servers are probed: when either does not answer the run is `embedded` (a fresh machine).
import { checkPostgres, checkRedis } from '../../src/lib/startup.ts';

export type TestMode = 'services' | 'embedded';

let mode: TestMode | null = null;

export async function detectTestMode(): Promise<TestMode> {
  const chosen = process.env.WAVELINE_TEST_MODE;
  if (chosen === 'services' || chosen === 'embedded') return (mode = chosen);
  if (chosen) throw new Error(`WAVELINE_TEST_MODE must be services or embedded, got "${chosen}"`);
  if (process.env.TEST_DATABASE_URL || process.env.TEST_REDIS_URL || process.env.TEST_REDIS_CLUSTER_URLS) return (mode = 'services');
  const up = await Promise.all([
    checkPostgres(process.env.DATABASE_URL as string, 1000).then(
      () => true,
      () => false,
    ),
    checkRedis(process.env.REDIS_URL as string, 1000).then(
      () => true,
      () => false,
    ),
  ]);
  return (mode = up.every(Boolean) ? 'services' : 'embedded');
}

/** The mode of this run (set by the root hook before any test). */
export function testMode(): TestMode {
  if (!mode) throw new Error('the test mode is decided in the root hook');
  return mode;
}

/**
 * Marks the running test (in `it`) or every test of the suite (in `before`) pending in embedded mode,
 * with the reason in its title: for tests of what only a real Redis or several processes have.
 */
export function requiresRedis(ctx: Mocha.Context, reason: string): void {
  pendingInEmbeddedMode(ctx, reason);
}

/** Whether the suite runs on a Redis Cluster (TEST_REDIS_CLUSTER_URLS). */
export const onRedisCluster = (): boolean => Boolean(process.env.REDIS_CLUSTER_URLS);

/**
 * Marks the running test (in `it`) or the suite (in `before`) pending on a Redis Cluster, with the reason
 * in its title: tests of one Redis server's own behaviour (killing its connections by hand, a proxy in
 * front of its one address, patterns over every feed channel — sharded channels have none).
 */
export function requiresSingleRedis(ctx: Mocha.Context, reason: string): void {
  if (!onRedisCluster()) return;
  const note = ` [one Redis only: ${reason}]`;
  const runnable = ctx.test as (Mocha.Runnable & { type?: string }) | undefined;
  const tests = runnable?.type === 'hook' ? (runnable.parent?.tests ?? []) : runnable ? [runnable] : [];
  for (const t of tests) if (!t.title.includes(note)) t.title += note;
  ctx.skip();
}

/** The same for tests of what only a Postgres server has: several sessions at once (PGlite is one). */
export function requiresPostgresServer(ctx: Mocha.Context, reason: string): void {
  pendingInEmbeddedMode(ctx, reason);
}

function pendingInEmbeddedMode(ctx: Mocha.Context, reason: string): void {
  if (testMode() !== 'embedded') return;
  const note = ` [pending in embedded mode: ${reason}]`;
  const runnable = ctx.test as (Mocha.Runnable & { type?: string }) | undefined;
  // In a `before` hook every test of the suite is skipped: name the reason on each.
  const tests = runnable?.type === 'hook' ? (runnable.parent?.tests ?? []) : runnable ? [runnable] : [];
  for (const t of tests) if (!t.title.includes(note)) t.title += note;
  ctx.skip();
}
