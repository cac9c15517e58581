import { randomUUID } from 'node:crypto';
import { feedListener } from '../../support/redisFeed.ts';
import { expect } from 'chai';
import { refreshOnAir } from '../../../src/domains/schedule/onair.ts';
import { runScheduleTick } from '../../../src/domains/schedule/timers.ts';
import { useClockedServer } from '../../support/server.ts';
import { eventually } from '../../support/factories.ts';
import { getSchedule, putBroadcast, putProgram, putRundown, scheduleFixture } from './helpers.ts';

interface Row {
  data: any;
  seq: number;
}

describe('feed rows schedule and on-air', () => {
  const { clock, server } = useClockedServer('2026-06-10T10:00:00Z', { reset: true }); // 12:00 in Berlin

  const row = async (stationId: string, kind: 'schedule' | 'on-air'): Promise<Row | undefined> =>
    server.svc.db('feed_rows').where({ station_id: stationId, kind, entry: 'current' }).first('data', 'seq');

  describe('schedule', () => {
    it('holds today through the next seven local days in the schedule response shape, rebuilt when a broadcast changes', async () => {
      const fx = await scheduleFixture(server.url);
      const today = await putBroadcast(server.url, fx, '2026-06-10T06:00:00Z', '2026-06-10T07:00:00Z');
      const daySeven = await putBroadcast(server.url, fx, '2026-06-17T21:00:00Z', '2026-06-17T21:30:00Z'); // 17 Jun 23:00 local
      await putBroadcast(server.url, fx, '2026-06-17T22:00:00Z', '2026-06-17T23:00:00Z'); // 18 Jun: outside
      await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z', { published: false });
      const stored = (await row(fx.station.id, 'schedule')) as Row;
      expect(Object.keys(stored.data).sort()).to.deep.equal(['broadcasts', 'contractVersion', 'timezone', 'truncated']);
      expect(stored.data.broadcasts.map((b: { id: string }) => b.id)).to.deep.equal([today, daySeven]);
      // The same presentation as the schedule response.
      const listed = await getSchedule(server.url, fx, '?fromDate=2026-06-10&throughDate=2026-06-17');
      expect(stored.data).to.deep.equal(listed.body);

      await putProgram(server.url, fx.station.id, { title: 'Renamed', presenterIds: [fx.presenterId] }, fx.programId);
      expect(((await row(fx.station.id, 'schedule')) as Row).data.broadcasts[0].title).to.equal('Renamed');
    });

    it('moves on a day at local midnight, and a tick that runs twice or late writes nothing more', async () => {
      const fx = await scheduleFixture(server.url);
      const dayEight = await putBroadcast(server.url, fx, '2026-06-18T06:00:00Z', '2026-06-18T07:00:00Z');
      expect(((await row(fx.station.id, 'schedule')) as Row).data.broadcasts).to.deep.equal([]);
      const midnight = new Date('2026-06-10T22:00:00Z'); // 11 Jun 00:00 in Berlin
      clock.set(midnight);
      await runScheduleTick(server.svc, fx.station.id, midnight);
      const after = (await row(fx.station.id, 'schedule')) as Row;
      expect(after.data.broadcasts.map((b: { id: string }) => b.id)).to.deep.equal([dayEight]);
      await runScheduleTick(server.svc, fx.station.id, midnight);
      clock.set('2026-06-10T22:07:00Z');
      await runScheduleTick(server.svc, fx.station.id, clock.now());
      expect(((await row(fx.station.id, 'schedule')) as Row).seq).to.equal(after.seq);
    });

    it('keeps broadcast statuses current: a start boundary turns scheduled into live', async () => {
      const fx = await scheduleFixture(server.url);
      const id = await putBroadcast(server.url, fx, '2026-06-10T11:00:00Z', '2026-06-10T12:00:00Z');
      expect(((await row(fx.station.id, 'schedule')) as Row).data.broadcasts[0]).to.include({ id, status: 'scheduled' });
      clock.set('2026-06-10T11:00:00Z');
      await runScheduleTick(server.svc, fx.station.id, clock.now());
      expect(((await row(fx.station.id, 'schedule')) as Row).data.broadcasts[0]).to.include({ id, status: 'live' });
    });
  });

  describe('on-air', () => {
    async function liveShow() {
      const fx = await scheduleFixture(server.url);
      const broadcastId = await putBroadcast(server.url, fx, '2026-06-10T09:00:00Z', '2026-06-10T11:00:00Z', { title: 'Live Hour' });
      const res = await putRundown(server.url, fx.station.id, broadcastId, [
        { kind: 'talk', title: 'Welcome', plannedStartsAt: '2026-06-10T09:55:00Z', durationSeconds: 300 },
        { kind: 'track', artist: 'Björk', title: 'Jóga', durationSeconds: 300 },
        { kind: 'track', artist: 'Air', title: 'La femme d’argent', durationSeconds: 420 },
      ]);
      const items = res.body.items as Array<{ id: string }>;
      return { fx, broadcastId, items };
    }

    it('shows the live broadcast and its planned rundown position, moving at item boundaries and ending with the broadcast', async () => {
      clock.set('2026-06-10T09:57:00Z');
      const { fx, broadcastId, items } = await liveShow();
      const now = (await row(fx.station.id, 'on-air')) as Row;
      expect(now.data).to.deep.equal({
        broadcast: {
          id: broadcastId,
          title: 'Live Hour',
          startsAt: '2026-06-10T09:00:00.000Z',
          endsAt: '2026-06-10T11:00:00.000Z',
          nature: 'live',
          program: { id: fx.programId, title: 'Morning Show', profileId: null },
        },
        position: {
          itemId: items[0].id,
          index: 0,
          kind: 'talk',
          artist: null,
          title: 'Welcome',
          plannedStartsAt: '2026-06-10T09:55:00.000Z',
          plannedEndsAt: '2026-06-10T10:00:00.000Z',
        },
        followed: null,
      });
      const at = async (iso: string) => {
        clock.set(iso);
        await runScheduleTick(server.svc, fx.station.id, clock.now());
        return ((await row(fx.station.id, 'on-air')) as Row).data;
      };
      expect((await at('2026-06-10T10:00:00Z')).position).to.include({ itemId: items[1].id, index: 1, artist: 'Björk' });
      expect((await at('2026-06-10T10:05:00Z')).position).to.include({
        itemId: items[2].id,
        index: 2,
        plannedEndsAt: '2026-06-10T10:12:00.000Z',
      });
      expect((await at('2026-06-10T10:12:00Z')).position, 'after the last item: no position').to.equal(null);
      expect(await at('2026-06-10T11:00:00Z'), 'nothing on air').to.equal(null);
    });

    it('is null before a broadcast and set at its start; a cancelled broadcast is never on air', async () => {
      const fx = await scheduleFixture(server.url);
      await putBroadcast(server.url, fx, '2026-06-10T10:30:00Z', '2026-06-10T11:00:00Z');
      await putBroadcast(server.url, fx, '2026-06-10T09:00:00Z', '2026-06-10T11:00:00Z', { cancelled: true });
      expect(((await row(fx.station.id, 'on-air')) as Row).data).to.equal(null);
      clock.set('2026-06-10T10:30:00Z');
      await runScheduleTick(server.svc, fx.station.id, clock.now());
      expect(((await row(fx.station.id, 'on-air')) as Row).data.broadcast.startsAt).to.equal('2026-06-10T10:30:00.000Z');
    });

    it('follows observations: followed is the newest matched or uncertain one, position moves to a match newer than the planned item’s start', async () => {
      const { fx, broadcastId, items } = await liveShow();
      const observe = async (itemId: string, outcome: string, observedAt: string) => {
        await server.svc.db('observations').insert({
          id: randomUUID(),
          station_id: fx.station.id,
          fingerprint: randomUUID(),
          artist: 'x',
          title: 'y',
          is_playing: true,
          observed_at: observedAt,
          received_at: observedAt,
          sort_at: observedAt,
          outcome,
          accepted: true,
          broadcast_id: broadcastId,
          rundown_item_id: itemId,
        });
        clock.set(observedAt);
        await refreshOnAir(server.svc, fx.station.id);
        return ((await row(fx.station.id, 'on-air')) as Row).data;
      };
      // 09:58: planned is item 0, but the automation already plays item 2.
      let data = await observe(items[2].id, 'matched', '2026-06-10T09:58:00Z');
      expect(data.position).to.include({ itemId: items[2].id, index: 2 });
      expect(data.followed).to.deep.equal({ itemId: items[2].id, outcome: 'matched', at: '2026-06-10T09:58:00.000Z' });
      // An uncertain observation is followed but does not move the position.
      data = await observe(items[1].id, 'uncertain', '2026-06-10T09:59:00Z');
      expect(data.followed).to.deep.equal({ itemId: items[1].id, outcome: 'uncertain', at: '2026-06-10T09:59:00.000Z' });
      expect(data.position.itemId).to.equal(items[2].id);
      // Item 1's planned start (10:00) is newer than the match: the plan takes over again.
      clock.set('2026-06-10T10:00:00Z');
      await runScheduleTick(server.svc, fx.station.id, clock.now());
      data = ((await row(fx.station.id, 'on-air')) as Row).data;
      expect(data.position.itemId).to.equal(items[1].id);
      expect(data.followed.outcome).to.equal('uncertain');
      // Ignored observations are not followed.
      data = await observe(items[0].id, 'ignored', '2026-06-10T10:01:00Z');
      expect(data.followed.itemId).to.equal(items[1].id);
    });

    it('publishes each change once on the feed bus, after commit', async () => {
      const fx = await scheduleFixture(server.url);
      const subscriber = feedListener();
      const messages: Array<{ kind: string; data: unknown }> = [];
      try {
        await subscriber.subscribe(fx.station.id);
        subscriber.onMessage((_channel: string, text: string) => messages.push(JSON.parse(text)));
        const id = await putBroadcast(server.url, fx, '2026-06-10T09:00:00Z', '2026-06-10T11:00:00Z');
        await eventually(() => messages.filter((m) => m.kind === 'on-air').length === 1);
        await refreshOnAir(server.svc, fx.station.id);
        await refreshOnAir(server.svc, fx.station.id);
        clock.set('2026-06-10T11:00:00Z');
        await refreshOnAir(server.svc, fx.station.id);
        await eventually(() => messages.filter((m) => m.kind === 'on-air').length === 2);
        const onAir = messages.filter((m) => m.kind === 'on-air');
        expect((onAir[0].data as { broadcast: { id: string } }).broadcast.id).to.equal(id);
        expect(onAir[1].data).to.equal(null);
      } finally {
        subscriber.disconnect();
      }
    });
  });
});
