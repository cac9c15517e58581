import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { LocalQueue, LocalWorker, type LocalJob } from '../../src/lib/embedded/localQueue.ts';
import { eventually } from '../support/factories.ts';

// The in-process job queue of the embedded default keeps BullMQ's semantics that Waveline relies on
// (docs/embedded.md): ids deduplicate, delays, attempts with backoff, job schedulers, kept on a clean stop.

describe('embedded job queue (LocalQueue, LocalWorker)', () => {
  const workers: LocalWorker[] = [];
  const queueName = () => `test-${randomUUID()}`;
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.close();
  });

  it('a job id adds a job once; a delayed job is delayed until its time, then runs', async () => {
    const name = queueName();
    const queue = new LocalQueue(name, {});
    const first = await queue.add('health.ping', { at: 'a' }, { jobId: 'same', delay: 300 });
    const again = await queue.add('health.ping', { at: 'b' }, { jobId: 'same' });
    expect(again).to.equal(first);
    expect(await first.isDelayed()).to.equal(true);
    expect((await queue.getDelayed()).map((j) => j.id)).to.deep.equal(['same']);
    const ran: Array<{ data: unknown; at: number }> = [];
    workers.push(new LocalWorker(name, async (job: LocalJob) => void ran.push({ data: job.data, at: Date.now() })));
    await eventually(() => ran.length === 1, { timeoutMs: 3000 });
    expect(ran[0].data).to.deep.equal({ at: 'a' });
    expect(ran[0].at - first.timestamp).to.be.at.least(290);
    expect(await first.getState()).to.equal('completed');
  });

  it('a failing job is retried with exponential backoff up to its attempts, then failed', async () => {
    const name = queueName();
    const queue = new LocalQueue(name, { attempts: 3, backoff: { type: 'exponential', delay: 100 } });
    const tries: number[] = [];
    workers.push(
      new LocalWorker(name, async () => {
        tries.push(Date.now());
        throw new Error('provider down');
      }),
    );
    const job = await queue.add('feeds.poll', {});
    await eventually(async () => (await job.getState()) === 'failed', { timeoutMs: 5000 });
    expect(tries).to.have.length(3);
    expect(tries[1] - tries[0]).to.be.at.least(95);
    expect(tries[2] - tries[1]).to.be.at.least(195);
    expect(job.failedReason).to.equal('provider down');
  });

  it('a job scheduler adds a job every interval until removed; a cron pattern is due at its next match', async () => {
    const name = queueName();
    const queue = new LocalQueue(name, {});
    const ran: string[] = [];
    workers.push(new LocalWorker(name, async (job: LocalJob) => void ran.push(job.id), { concurrency: 2 }));
    await queue.upsertJobScheduler('poll', { every: 150 }, { name: 'feeds.poll', data: {} });
    await eventually(() => ran.length >= 3, { timeoutMs: 3000 });
    expect(await queue.removeJobScheduler('poll')).to.equal(true);
    const count = ran.length;
    await new Promise((r) => setTimeout(r, 400)); // long enough for two more runs, were it still scheduled
    expect(ran.length).to.equal(count);
    await queue.upsertJobScheduler('sweep', { pattern: '7 * * * *' }, { name: 'schedule.sweep', data: {} });
    const [sweep] = await queue.getJobSchedulers();
    const next = new Date(sweep.next);
    expect([next.getMinutes(), next.getSeconds()]).to.deep.equal([7, 0]);
    expect(sweep.next - Date.now()).to.be.within(0, 3600_000);
  });

  it('pending jobs and schedulers are saved to the file and restored by the next process', function () {
    this.timeout(30_000);
    const dir = mkdtempSync(join(tmpdir(), 'waveline-queue-'));
    const module = new URL('../../src/lib/embedded/localQueue.ts', import.meta.url).href;
    const run = (code: string) =>
      execFileSync(process.execPath, ['--input-type=module', '-e', `import * as q from '${module}';\n${code}`], { encoding: 'utf8' });
    try {
      run(`q.persistLocalQueues('${dir}/jobs.json', {});
        const queue = new q.LocalQueue('default', {});
        await queue.add('schedule.midnight', { stationId: 'st_1', at: 'x' }, { jobId: 'midnight', delay: 3600000 });
        await queue.add('health.ping', { at: 'now' }, { jobId: 'waiting' });
        await queue.upsertJobScheduler('feeds.poll:st_1:weather', { every: 600000 }, { name: 'feeds.poll', data: { stationId: 'st_1', feed: 'weather' } });
        q.saveLocalQueues();`);
      const restored = JSON.parse(
        run(`q.persistLocalQueues('${dir}/jobs.json', {});
        const queue = new q.LocalQueue('default', {});
        const jobs = await queue.getJobs(['waiting', 'delayed']);
        process.stdout.write(JSON.stringify({ jobs: jobs.map((j) => [j.id, j.state, j.data]), schedulers: (await queue.getJobSchedulers()).map((s) => s.key) }));`),
      );
      expect(restored.jobs).to.deep.include.members([
        ['midnight', 'delayed', { stationId: 'st_1', at: 'x' }],
        ['waiting', 'waiting', { at: 'now' }],
      ]);
      expect(restored.schedulers).to.deep.equal(['feeds.poll:st_1:weather']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
