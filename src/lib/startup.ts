import pg from 'pg';
import { Cluster, Redis } from 'ioredis';
import type { RedisTarget } from '../config.ts';
import { clusterSeeds } from './redis.ts';

// Start-up checks of the configured services: a Postgres or Redis that does not answer stops the
// process with one line naming the URL (password masked) and what to do — never a stack trace, never a
// hang. Redis going away after start is another matter: reads keep serving and ioredis retries.

/** An expected failure at start: main.ts prints its message as one line and exits with `exitCode`. */
export class StartupError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 69 /* EX_UNAVAILABLE */) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** How long a configured service has to answer at start. */
export const STARTUP_TIMEOUT_MS = 5000;

/** The URL with its password (and a `password=` query parameter) replaced by `***`. */
export function maskUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    if (url.searchParams.has('password')) url.searchParams.set('password', '***');
    return url.toString().replace(/%2A%2A%2A/g, '***');
  } catch {
    return '(unparsable URL)';
  }
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** What went wrong, in words: a network error's code, or the time it waited for an answer. */
function failure(err: unknown, timeoutMs: number): string {
  const code = (err as { code?: string } | undefined)?.code;
  if (code && !SQLSTATE.test(code)) return `the connection failed (${code})`;
  return `it did not answer within ${timeoutMs / 1000} s`;
}

/** Resolves when Postgres at `url` answers (a database that does not exist yet counts: it is created). */
export async function checkPostgres(url: string, timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === '3D000') return;
    const what = code && SQLSTATE.test(code) ? `it refused the connection: ${(err as Error).message}` : failure(err, timeoutMs);
    throw new StartupError(
      `cannot reach Postgres at ${maskUrl(url)}: ${what}. Start Postgres or fix DATABASE_URL; unset DATABASE_URL to use the embedded database (waveline dev / npm start only).`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Resolves when Redis at `url` answers PING. */
export async function checkRedis(url: string, timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let lastError: unknown;
  redis.on('error', (err) => (lastError = err));
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.connect().then(() => redis.ping()),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer')), timeoutMs);
      }),
    ]);
  } catch (err) {
    throw new StartupError(
      `cannot reach Redis at ${maskUrl(url)}: ${failure(lastError ?? err, timeoutMs)}. Start Redis or fix REDIS_URL; unset REDIS_URL to run the queue and feed bus in-process (waveline dev / npm start only).`,
    );
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

/**
 * Resolves when the Redis Cluster of `seeds` answers: a seed gives the slot map, and every slot has a
 * master that answers PING (cluster_state ok).
 */
export async function checkRedisCluster(seeds: string[], timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  const { nodes, redisOptions } = clusterSeeds(seeds);
  const cluster = new Cluster(nodes, {
    lazyConnect: true,
    enableOfflineQueue: false,
    clusterRetryStrategy: () => null,
    redisOptions: { ...redisOptions, connectTimeout: timeoutMs, maxRetriesPerRequest: 0 },
  });
  let lastError: unknown;
  cluster.on('error', (err) => (lastError = err));
  let timer: NodeJS.Timeout | undefined;
  const named = seeds.map(maskUrl).join(', ');
  try {
    const info = await Promise.race([
      cluster.connect().then(() => cluster.cluster('INFO')),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer')), timeoutMs);
      }),
    ]);
    const state = /cluster_state:(\w+)/.exec(String(info))?.[1];
    if (state !== 'ok')
      throw new StartupError(
        `the Redis Cluster at ${named} is not ok (cluster_state:${state ?? 'unknown'}): a slot has no master. Fix the cluster or REDIS_CLUSTER_URLS.`,
      );
  } catch (err) {
    if (err instanceof StartupError) throw err;
    throw new StartupError(
      `cannot reach the Redis Cluster at ${named}: ${failure(lastError ?? err, timeoutMs)}. Start the cluster or fix REDIS_CLUSTER_URLS; unset it to run the queue and feed bus in-process (waveline dev / npm start only).`,
    );
  } finally {
    clearTimeout(timer);
    cluster.disconnect();
  }
}

/** Checks the configured Redis: one server or a cluster (nothing for the in-process store). */
export async function checkRedisTarget(target: RedisTarget, timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  if (target.kind === 'single') await checkRedis(target.url, timeoutMs);
  else if (target.kind === 'cluster') await checkRedisCluster(target.seeds, timeoutMs);
}

/** Checks the configured (non-embedded) services together. */
export async function checkServices(config: { databaseUrl: string; redis: RedisTarget }): Promise<void> {
  await Promise.all([config.databaseUrl ? checkPostgres(config.databaseUrl) : undefined, checkRedisTarget(config.redis)]);
}
