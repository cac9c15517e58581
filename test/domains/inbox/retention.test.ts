import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { startWorkers } from '../../../workers/index.ts';
import { inboxFixture } from './helpers.ts';

// docs/inbox.md, "Retention": the worker's daily inbox.prune deletes messages and votes older than their
// station's retentionDays (the plays' counts stay), and bans that ran out.

const T0 = new Date('2026-12-15T10:00:00.000Z');
const DAY = 86_400_000;
const RANGE = `from=${encodeURIComponent('2026-12-15T09:00:00Z')}&to=${encodeURIComponent('2026-12-15T11:00:00Z')}`;

describe('inbox: retention', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });

  it('the daily inbox.prune deletes what is older than each station’s retentionDays; counts stay; ran-out bans go', async () => {
    const short = await inboxFixture(server.url, clock, { inbox: { retentionDays: 1 } });
    const long = await inboxFixture(server.url, clock);
    const { id } = (await short.message('old news')).body;
    await long.message('kept a month');
    await short.play('A', 'One');
    await short.like(randomUUID(), 1);
    await admin(server.url, 'POST', `/stations/${short.station.id}/inbox/bans`, { messageId: id, days: 1 });
    clock.advance(DAY / 2);
    await short.message('recent');
    clock.set(T0.getTime() + DAY + 1000);

    const workers = await startWorkers(server.svc);
    try {
      const schedulers = await server.svc.jobs.queue('default').getJobSchedulers();
      expect(schedulers.map((s: { key?: string; id?: string | null }) => s.key ?? s.id)).to.include('inbox.prune');
      const job = await server.svc.jobs.enqueue('inbox.prune', {});
      await eventually(
        async () => {
          const stored = await server.svc.jobs.queue('default').getJob(job.id!);
          return stored && (await stored.getState()) === 'completed';
        },
        { timeoutMs: 10_000 },
      );
    } finally {
      await workers.close();
    }
    expect((await short.list()).map((m: { text: string }) => m.text)).to.deep.equal(['recent']);
    expect((await long.list()).map((m: { text: string }) => m.text)).to.deep.equal(['kept a month']);
    expect(await server.svc.db('inbox_votes').where({ station_id: short.station.id })).to.have.length(0);
    const plays = (await admin(server.url, 'GET', `/stations/${short.station.id}/plays?${RANGE}`)).body.plays;
    expect(plays.map((p: Record<string, unknown>) => [p.title, p.likes])).to.deep.equal([['One', 1]]);
    expect(await server.svc.db('inbox_bans').where({ station_id: short.station.id })).to.have.length(0);
  });
});
