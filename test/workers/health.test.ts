import { expect } from 'chai';
import { sharedServer } from '../support/server.ts';
import { startWorkers } from '../../workers/index.ts';
import { eventually } from '../support/factories.ts';
import { ValidationError } from '../../src/lib/errors.ts';

describe('worker role', () => {
  it('takes a health job from the queue and completes it', async () => {
    const server = await sharedServer();
    const workers = await startWorkers(server.svc);
    try {
      const job = await server.svc.jobs.enqueue('health.ping', { at: 'now' });
      // Polls the queue (BullMQ's or the in-process one) until the worker stored the job's result. The job is
      // read again once its state says completed: a snapshot read while it ran has no return value yet.
      const queue = server.svc.jobs.queue('default');
      const done = await eventually(
        async () => {
          const stored = await queue.getJob(job.id!);
          return stored && (await stored.getState()) === 'completed' ? queue.getJob(job.id!) : null;
        },
        { timeoutMs: 10_000 },
      );
      expect(done!.returnvalue.pong).to.equal('now');
    } finally {
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
