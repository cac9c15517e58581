import type { Db } from './db.ts';
import type { Redis } from './redis.ts';

/** How long a readiness probe waits for each dependency before calling it down. */
const PROBE_TIMEOUT_MS = 2000;

const answers = <T>(probe: Promise<T>): Promise<boolean> =>
  Promise.race([probe, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS).unref())]).then(
    () => true,
    () => false,
  );

/** Whether Postgres and Redis each answer within 2 s: the `/readyz` of web and of the worker port. */
export async function dependenciesAnswer(svc: { db: Db; redis: Redis }): Promise<{ postgres: boolean; redis: boolean }> {
  const [postgres, redis] = await Promise.all([answers(svc.db.raw('select 1')), answers(svc.redis.ping())]);
  return { postgres, redis };
}
