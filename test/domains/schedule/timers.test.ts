import { expect } from 'chai';
import type { Job } from 'bullmq';
import { runScheduleTick, sweepSchedules, timerJobId } from '../../../src/domains/schedule/timers.ts';
import { startWorkers } from '../../../workers/index.ts';
import { useClockedServer } from '../../support/server.ts';
import { eventually } from '../../support/factories.ts';
import { putBroadcast, putRundown, scheduleFixture } from './helpers.ts';

describe('schedule timing jobs (BullMQ delayed jobs)', () => {
  const { clock, server } = useClockedServer('2026-06-10T10:00:00Z', { reset: true }); // 12:00 in Berlin

  const queue = () => server.svc.jobs.queue('default');

  /** The station's delayed timer jobs as [name, planned instant, delay] sorted by instant. */
  async function delayedTimers(stationId: string): Promise<Array<[string, string, number]>> {
    const jobs = (await queue().getDelayed(0, -1)) as Job[];
    return jobs
      .filter((job) => job.data?.stationId === stationId)
      .map((job): [string, string, number] => {
        expect(job.id).to.equal(timerJobId(job.name as 'schedule.boundary', stationId, new Date(job.data.at)));
        return [job.name, job.data.at, job.delay];
      })
      .sort((a, b) => a[1].localeCompare(b[1]) || a[0].localeCompare(b[0]));
  }

  const delayFrom = (now: string) => (at: string) => Date.parse(at) - Date.parse(now);

  it('plans the next local midnight and every broadcast and rundown boundary through the end of tomorrow, each at its instant', async () => {
    const fx = await scheduleFixture(server.url);
    const id = await putBroadcast(server.url, fx, '2026-06-10T11:00:00Z', '2026-06-10T12:00:00Z');
    await putRundown(server.url, fx.station.id, id, [
      { kind: 'talk', title: 'A', durationSeconds: 600 },
      { kind: 'track', title: 'B', durationSeconds: 600 },
    ]);
    await putBroadcast(server.url, fx, '2026-06-11T05:00:00Z', '2026-06-11T06:00:00Z');
    await putBroadcast(server.url, fx, '2026-06-12T05:00:00Z', '2026-06-12T06:00:00Z'); // after tomorrow: planned later
    await putBroadcast(server.url, fx, '2026-06-10T15:00:00Z', '2026-06-10T16:00:00Z', { cancelled: true }); // never on air
    await putBroadcast(server.url, fx, '2026-06-10T17:00:00Z', '2026-06-10T18:00:00Z', { published: false });
    const delay = delayFrom('2026-06-10T10:00:00Z');
    const b = (at: string): [string, string, number] => ['schedule.boundary', at, delay(at)];
    expect(await delayedTimers(fx.station.id)).to.deep.equal([
      b('2026-06-10T11:00:00.000Z'),
      b('2026-06-10T11:10:00.000Z'),
      b('2026-06-10T11:20:00.000Z'),
      b('2026-06-10T12:00:00.000Z'),
      ['schedule.midnight', '2026-06-10T22:00:00.000Z', delay('2026-06-10T22:00:00.000Z')],
      b('2026-06-11T05:00:00.000Z'),
      b('2026-06-11T06:00:00.000Z'),
    ]);
    const job = (await queue().getJob(timerJobId('schedule.boundary', fx.station.id, new Date('2026-06-10T11:00:00Z')))) as Job;
    expect(job.timestamp + job.delay - Date.now(), 'due one hour of real time from now').to.be.within(3600_000 - 60_000, 3600_000);
  });

  it('re-plans when the schedule changes: moved or cancelled broadcasts lose their timers, nothing is duplicated', async () => {
    const fx = await scheduleFixture(server.url);
    const id = await putBroadcast(server.url, fx, '2026-06-10T11:00:00Z', '2026-06-10T12:00:00Z');
    await putBroadcast(server.url, fx, '2026-06-10T13:00:00Z', '2026-06-10T14:00:00Z', {}, id);
    await putBroadcast(server.url, fx, '2026-06-10T13:00:00Z', '2026-06-10T14:00:00Z', {}, id); // same again
    expect((await delayedTimers(fx.station.id)).map(([name, at]) => `${name}@${at}`)).to.deep.equal([
      'schedule.boundary@2026-06-10T13:00:00.000Z',
      'schedule.boundary@2026-06-10T14:00:00.000Z',
      'schedule.midnight@2026-06-10T22:00:00.000Z',
    ]);
    await putBroadcast(server.url, fx, '2026-06-10T13:00:00Z', '2026-06-10T14:00:00Z', { cancellationReason: 'Gone' }, id);
    expect((await delayedTimers(fx.station.id)).map(([name]) => name)).to.deep.equal(['schedule.midnight']);
  });

  it('a midnight tick plans the following local midnight, DST-correct (New York, 23-hour 8 March)', async () => {
    clock.set('2026-03-07T12:00:00Z');
    const fx = await scheduleFixture(server.url, { timezone: 'America/New_York' });
    await putBroadcast(server.url, fx, '2026-03-09T04:30:00Z', '2026-03-09T05:30:00Z'); // 9 Mar 00:30 local (EDT): after tomorrow
    expect((await delayedTimers(fx.station.id)).map(([name, at]) => `${name}@${at}`)).to.deep.equal([
      'schedule.midnight@2026-03-08T05:00:00.000Z',
    ]);
    clock.set('2026-03-08T05:00:00Z');
    await runScheduleTick(server.svc, fx.station.id, clock.now());
    expect((await delayedTimers(fx.station.id)).map(([name, at, delay]) => `${name}@${at}+${delay}`)).to.deep.equal([
      `schedule.midnight@2026-03-09T04:00:00.000Z+${23 * 3600_000}`,
      `schedule.boundary@2026-03-09T04:30:00.000Z+${23.5 * 3600_000}`,
      `schedule.boundary@2026-03-09T05:30:00.000Z+${24.5 * 3600_000}`,
    ]);
  });

  it('the hourly sweep re-plans a station whose timers were lost', async () => {
    const fx = await scheduleFixture(server.url);
    await putBroadcast(server.url, fx, '2026-06-10T11:00:00Z', '2026-06-10T12:00:00Z');
    const planned = await delayedTimers(fx.station.id);
    for (const job of (await queue().getDelayed(0, -1)) as Job[]) if (job.data?.stationId === fx.station.id) await job.remove();
    expect(await delayedTimers(fx.station.id)).to.deep.equal([]);
    await sweepSchedules(server.svc, clock.now());
    expect(await delayedTimers(fx.station.id)).to.deep.equal(planned);
    const schedulers = await queue().getJobSchedulers();
    expect(schedulers.map((s) => s.key)).to.include('schedule.sweep');
  });

  describe('with a running worker', () => {
    let workers: Awaited<ReturnType<typeof startWorkers>>;
    before(async () => {
      workers = await startWorkers(server.svc);
    });
    after(() => workers.close());

    const onAir = async (stationId: string) =>
      (await server.svc.db('feed_rows').where({ station_id: stationId, kind: 'on-air', entry: 'current' }).first('data'))?.data;

    it('updates on-air at the broadcast start, at rundown item boundaries and at the end, as the jobs fall due', async () => {
      const start = Date.now() + 1000;
      clock.set(start - 1000);
      const fx = await scheduleFixture(server.url);
      const iso = (ms: number) => new Date(ms).toISOString();
      // Unpublished while the rundown is written, so every timer is planned by the one publishing PUT.
      const id = await putBroadcast(server.url, fx, iso(start), iso(start + 1500), { published: false });
      const { body } = await putRundown(server.url, fx.station.id, id, [
        { kind: 'talk', title: 'A', durationSeconds: 0.5 },
        { kind: 'track', title: 'B', durationSeconds: 0.5 },
      ]);
      await putBroadcast(server.url, fx, iso(start), iso(start + 1500), { published: true }, id);
      expect(await onAir(fx.station.id)).to.equal(null);
      const seen: string[] = [];
      await eventually(
        async () => {
          const data = await onAir(fx.station.id);
          const state = data === null ? 'off' : data.position ? data.position.itemId : 'gap';
          if (seen[seen.length - 1] !== state) seen.push(state);
          return seen.length >= 2 && state === 'off';
        },
        { timeoutMs: 10_000, intervalMs: 10 },
      );
      expect(seen[0]).to.equal('off');
      expect(seen).to.include.members([body.items[0].id, body.items[1].id]);
      expect(seen.indexOf(body.items[0].id)).to.be.lessThan(seen.indexOf(body.items[1].id));
    });

    it('rebuilds the schedule row when the local midnight job falls due', async () => {
      const fx0 = Date.now();
      clock.set(new Date('2026-06-10T22:00:00Z').getTime() - 400); // 400 ms before 11 Jun 00:00 in Berlin
      const fx = await scheduleFixture(server.url);
      const dayEight = await putBroadcast(server.url, fx, '2026-06-18T06:00:00Z', '2026-06-18T07:00:00Z');
      const schedule = async () =>
        (await server.svc.db('feed_rows').where({ station_id: fx.station.id, kind: 'schedule', entry: 'current' }).first('data')).data;
      expect((await schedule()).broadcasts).to.deep.equal([]);
      await eventually(async () => (await schedule()).broadcasts.length === 1, { timeoutMs: 10_000 });
      expect((await schedule()).broadcasts[0].id).to.equal(dayEight);
      expect(Date.now() - fx0, 'ran when due, not at once').to.be.at.least(300);
      // …and planned the next midnight, 24 hours on.
      await eventually(() => queue().getJob(timerJobId('schedule.midnight', fx.station.id, new Date('2026-06-11T22:00:00Z'))));
    });
  });
});
