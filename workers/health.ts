import type { JobPayload } from '../src/jobs.ts';

/** Proves the queue → worker path end to end; returns when the ping was handled. */
export async function healthPing(payload: JobPayload<'health.ping'>): Promise<{ pong: string; handledAt: string }> {
  return { pong: payload.at, handledAt: new Date().toISOString() };
}
