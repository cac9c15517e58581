import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { loadConfig, type RedisTarget } from '../../../src/config.ts';
import { QUEUES } from '../../../src/jobs.ts';
import { keys, useRedisNames } from '../../../src/lib/keys.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import { createQueue } from '../../../src/lib/queue.ts';
import type { Redis } from '../../../src/lib/redis.ts';
import { keySlot } from '../../../src/lib/slot.ts';
import { eventually } from '../../support/factories.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';
import { closeNodes, killMaster, masters, restoreCluster, node, ownerOf, SEEDS, startClusterRole, type ClusterRole } from './support.ts';

// Names on a Redis Cluster (src/lib/keys.ts): every key of a station in its hash tag, a hash tag per
// BullMQ queue so the queues spread over the masters, and no command spanning two slots (CROSSSLOT) on
// the paths a web and a worker process run.

describe('Redis Cluster: names and queues', function () {
  this.timeout(120_000);
  const target: RedisTarget = { kind: 'cluster', seeds: SEEDS.split(',') };
  let web: ClusterRole;
  let worker: ClusterRole;
  const queues: Array<{ queue: Queue; connection: Redis }> = [];

  before(async () => {
    await restoreCluster();
    useRedisNames(target);
    [web, worker] = await Promise.all([startClusterRole('web'), startClusterRole('worker')]);
  });

  after(async () => {
    for (const { queue, connection } of queues) {
      await queue.close();
      connection.disconnect();
    }
    useRedisNames(loadConfig().redis);
    await Promise.all([web?.stop(), worker?.stop()]);
    closeNodes();
  });

  it('hashes names as CLUSTER KEYSLOT does, every key of a station in its slot', async () => {
    const station = 'st_scale_names';
    const names = [
      keys.feedChannel(station),
      keys.scheduleTimers(station),
      keys.ingestResult(station, 'event-1'),
      `${keys.pushPacePrefix}:${keys.pushPaceBucket(station)}`,
      keys.queuePrefix('default'),
      'no-tag-at-all',
      'empty{}tag',
    ];
    for (const name of names) expect(keySlot(name), name).to.equal(Number(await node(7101).call('CLUSTER', 'KEYSLOT', name)));
    const stationSlots = new Set(names.slice(0, 4).map(keySlot));
    expect([...stationSlots], "a station's keys share one slot").to.have.length(1);
    expect(keys.feedChannel(station)).to.equal('waveline:feed:{st_scale_names}');
  });

  it('puts each BullMQ queue in its own hash tag, the queues on every master, and a worker process runs their jobs', async () => {
    const logger = createLogger(loadConfig(), 'scale-test');
    const owners = new Map<string, number>();
    for (const name of QUEUES) {
      const entry = createQueue(name, target, logger);
      queues.push(entry);
      const job = await entry.queue.add('health.ping', { at: new Date().toISOString() });
      // Every key of the queue is on the master owning the queue's tag.
      const owner = await ownerOf(keySlot(`{${name}}`));
      owners.set(name, owner);
      const stored = (await node(owner).keys(`waveline:bull:{${name}}:*`)) as string[];
      expect(stored.length, `keys of queue ${name} on ${owner}`).to.be.greaterThan(0);
      for (const other of (await masters()).filter((port) => port !== owner))
        expect(await node(other).keys(`waveline:bull:{${name}}:*`), `queue ${name} on ${other}`).to.deep.equal([]);
      await eventually(async () => (await entry.queue.getJob(job.id as string))?.isCompleted() ?? false, { timeoutMs: 20_000 });
      const counts = await entry.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
      expect(counts.completed).to.be.greaterThan(0);
    }
    expect(new Set(owners.values()), 'queues on every master').to.have.length(3);
  });

  it("keeps running jobs after the master of a queue's slot is killed and its replica takes over (the worker process carries on by itself)", async () => {
    const logger = createLogger(loadConfig(), 'scale-test');
    const entry = createQueue('ingest', target, logger);
    queues.push(entry);
    const slot = keySlot('{ingest}');
    try {
      await killMaster(await ownerOf(slot), slot);
      const job = await eventually(() => entry.queue.add('health.ping', { at: new Date().toISOString() }).catch(() => null), {
        timeoutMs: 10_000,
        intervalMs: 200,
      });
      await eventually(async () => (await entry.queue.getJob(job!.id as string).catch(() => null))?.isCompleted() ?? false, {
        timeoutMs: 20_000,
      });
    } finally {
      // Whatever happened, the next test starts on a whole cluster.
      await restoreCluster();
    }
  });

  it('runs an ingest through web and worker processes (an awaited job, the feed, rate limits) with no CROSSSLOT anywhere', async () => {
    const { station, ingestToken } = await ingestFixture(web.url);
    for (let i = 0; i < 3; i++) {
      const res = await ingest(web.url, station, ingestToken, { artist: 'Cluster', title: `Track ${i}` });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    expect(web.output() + worker.output()).not.to.match(/CROSSSLOT/);
  });
});
