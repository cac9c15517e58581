import { expect } from 'chai';
import { QueueEvents } from 'bullmq';
import { sharedServer } from '../support/server.ts';
import { startWorkers } from '../../workers/index.ts';
import { keys } from '../../src/lib/keys.ts';
import { ValidationError } from '../../src/lib/errors.ts';
import { createBlockingRedis } from '../../src/lib/redis.ts';

describe('worker role', () => {
  it('takes a health job from the queue and completes it', async () => {
    const server = await sharedServer();
    const workers = await startWorkers(server.svc);
    const connection = createBlockingRedis(server.svc.config.redisUrl);
    const events = new QueueEvents('default', { connection, prefix: keys.queuePrefix });
    try {
      await events.waitUntilReady();
      const job = await server.svc.jobs.enqueue('health.ping', { at: 'now' });
      const result = await job.waitUntilFinished(events, 10_000);
      expect(result.pong).to.equal('now');
    } finally {
      await events.close();
      connection.disconnect();
      await workers.close();
    }
  });

  it('refuses a job whose payload does not match its schema', async () => {
    const server = await sharedServer();
    let error: unknown;
    try {
      await server.svc.jobs.enqueue('health.ping', { at: 5 } as unknown as { at: string });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(Error);
    // Named as a job payload, not as an HTTP request body (job validation does not go through http/).
    expect((error as Error).message).to.equal('Invalid payload of job health.ping.');
    expect((error as ValidationError).issues).to.deep.include({ path: 'payload.at', code: 'type', message: 'payload.at must be string' });
  });
});
