import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Job } from 'bullmq';
import { loadConfig } from '../../src/config.ts';
import { Jobs, QUEUES } from '../../src/jobs.ts';
import type { JobResults } from '../../src/lib/jobResults.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createQueue, createWorker, createWorkerConnection } from '../../src/lib/queue.ts';
import { eventually } from '../support/factories.ts';

// BullMQ's connections (src/lib/queue.ts): one for every queue a process produces to, one for every
// worker's regular commands (each worker adds its own blocking duplicate), so a process on a Redis
// Cluster keeps a few cluster clients, not one per queue and per worker.

describe('BullMQ connections of a process', function () {
  const config = loadConfig();
  const logger = createLogger(config, 'test');
  let admin: Redis;
  const db = () => Number(new URL((config.redis as { url: string }).url).pathname.slice(1) || 0);
  /** Clients connected to this run's Redis index, this test's admin connection left out. */
  const clients = async (): Promise<number> => {
    const list = String(await admin.call('CLIENT', 'LIST'));
    return list.split('\n').filter((line) => new RegExp(`\\bdb=${db()}\\b`).test(line) && !line.includes('name=queue-test-admin')).length;
  };

  before(async function () {
    if (config.redis.kind !== 'single') this.skip();
    admin = new Redis(config.redis.url, { connectionName: 'queue-test-admin' });
  });
  after(() => admin?.disconnect());

  it('every queue of a process on one connection, closed by Jobs after its queues', async () => {
    const before = await clients();
    const jobs = new Jobs(config.redis, logger, null as unknown as JobResults);
    for (const name of QUEUES) await jobs.queue(name).waitUntilReady();
    await jobs.enqueue('health.ping', { at: new Date().toISOString() });
    expect((await clients()) - before, `clients for ${QUEUES.length} queues`).to.equal(1);
    await jobs.close();
    await eventually(async () => (await clients()) === before);
  });

  it("every worker's regular commands on one connection, each worker with its own blocking one; the shared one outlives them", async () => {
    const before = await clients();
    const connection = createWorkerConnection(config.redis, logger);
    // Queues of this test alone: no worker of another suite on the same Redis can take its job.
    const run = randomUUID().slice(0, 8);
    const names = [`test-a-${run}`, `test-b-${run}`, `test-c-${run}`];
    const ran: string[] = [];
    const workers = names.map((name) =>
      createWorker(name, async (job: Job) => void ran.push(`${name}:${job.name}`), config.redis, logger, { concurrency: 1 }, connection),
    );
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    // The shared connection and one blocking duplicate per worker.
    await eventually(async () => (await clients()) - before === 1 + names.length);
    expect((await clients()) - before).to.equal(1 + names.length);

    const { queue, connection: producer } = createQueue(names[0], config.redis, logger);
    try {
      await queue.add('ping', {});
      await eventually(() => ran.length === 1);
      expect(ran).to.deep.equal([`${names[0]}:ping`]);
      await queue.obliterate({ force: true });

      await Promise.all(workers.map((w) => w.close()));
      expect(connection.status, 'the shared connection, after its workers closed').to.equal('ready');
      expect(await connection.ping()).to.equal('PONG');
    } finally {
      // Whatever failed, nothing of the test stays connected (a worker's connection retries forever).
      await queue.close();
      producer.disconnect();
      await Promise.all(workers.map((w) => w.close(true)));
      connection.disconnect();
    }
    await eventually(async () => (await clients()) === before);
  });
});
