import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sharedServer } from '../support/server.ts';
import { startWorkers } from '../../workers/index.ts';
import { eventually, createStation } from '../support/factories.ts';
import { removeRow, writeRow } from '../support/feed.ts';

describe('worker role: feed.prune', () => {
  it('runs hourly (a job scheduler) and prunes tombstones older than 24 h, raising the station feed_pruned_seq; younger ones stay', async () => {
    const server = await sharedServer();
    const workers = await startWorkers(server.svc);
    try {
      const schedulers = await server.svc.jobs.queue('default').getJobSchedulers();
      expect(schedulers.map((s: { key?: string; id?: string | null }) => s.key ?? s.id)).to.include('feed.prune');

      const station = await createStation(server.url);
      const [old, young] = [randomUUID(), randomUUID()];
      for (const id of [old, young]) {
        await writeRow(server.svc, station.id, 'content', id, { id });
        await removeRow(server.svc, station.id, 'content', id);
      }
      const oldRow = await server.svc.db('feed_rows').where({ station_id: station.id, entry: old }).first();
      await server.svc
        .db('feed_rows')
        .where({ station_id: station.id, entry: old })
        .update({ updated_at: new Date(Date.now() - 25 * 3600_000) });

      const job = await server.svc.jobs.enqueue('feed.prune', {});
      await eventually(
        async () => {
          const stored = await server.svc.jobs.queue('default').getJob(job.id!);
          return stored && (await stored.getState()) === 'completed';
        },
        { timeoutMs: 10_000 },
      );
      const tombstones = await server.svc.db('feed_rows').where({ station_id: station.id, deleted: true }).select('entry');
      expect(tombstones.map((r: { entry: string }) => r.entry)).to.deep.equal([young]);
      const row = await server.svc.db('stations').where({ id: station.id }).first('feed_pruned_seq');
      expect(Number(row.feed_pruned_seq)).to.equal(Number(oldRow.seq));
    } finally {
      await workers.close();
    }
  });
});
