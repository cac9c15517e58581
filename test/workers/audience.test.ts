import { expect } from 'chai';
import { createStation, eventually } from '../support/factories.ts';
import { sharedServer, type TestServer } from '../support/server.ts';
import { startWorkers } from '../../workers/index.ts';

// docs/audience.md#the-poller: samples are kept 35 days (the daily audience.prune, like audit.prune); the
// poller and the performances fix run every AUDIENCE_POLL_SECONDS as job schedulers of the worker.

describe('audience jobs', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('schedules audience.poll and audience.fix every poll interval and audience.prune daily; the prune drops samples older than 35 days', async () => {
    const workers = await startWorkers(server.svc);
    try {
      const schedulers = (await server.svc.jobs.queue('default').getJobSchedulers()) as Array<{
        key?: string;
        id?: string | null;
        every?: number | string | null;
      }>;
      const byId = new Map(schedulers.map((s) => [s.key ?? s.id, s]));
      expect([...byId.keys()]).to.include.members(['audience.poll', 'audience.fix', 'audience.prune']);
      expect(Number(byId.get('audience.poll')!.every)).to.equal(server.svc.config.audience.pollSeconds * 1000);
      const station = await createStation(server.url, { profile: { streamUrls: [{ url: 'https://s.example.org/a', key: 'a' }] } });
      const day = 24 * 3600_000;
      const sample = (ageDays: number) => ({
        station_id: station.id,
        stream_key: 'a',
        at: new Date(Date.now() - ageDays * day),
        listeners: ageDays,
        source: 'push',
      });
      await server.svc.db('listener_samples').insert([sample(36), sample(34)]);
      const job = await server.svc.jobs.enqueue('audience.prune', {});
      await eventually(
        async () => {
          const stored = await server.svc.jobs.queue('default').getJob(job.id!);
          return stored && (await stored.getState()) === 'completed';
        },
        { timeoutMs: 10_000 },
      );
      const left = await server.svc.db('listener_samples').where({ station_id: station.id }).select('listeners');
      expect(left.map((r: { listeners: number }) => r.listeners)).to.deep.equal([34]);
    } finally {
      await workers.close();
    }
  });
});
