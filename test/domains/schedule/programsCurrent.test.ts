import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { putBroadcast, putPresenter, putProgram, scheduleFixture, type ScheduleFixture } from './helpers.ts';

describe('programs GET …/programs', () => {
  const { server } = useClockedServer('2026-06-10T10:00:00Z');

  const getPrograms = (fx: ScheduleFixture, query = '') =>
    request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/programs${query}`, { token: fx.token });

  it('echoes the window and lists programs with a published, non-cancelled broadcast in it, with presenters and weekly slots', async () => {
    const fx = await scheduleFixture(server.url);
    const second = await putPresenter(server.url, fx.station.id, 'Bo Cohost');
    await putProgram(
      server.url,
      fx.station.id,
      {
        title: 'Morning Show',
        description: 'Wake up',
        profileId: 'profile-1',
        presenterIds: [second, fx.presenterId],
        slots: [
          { weekday: 1, startTime: '06:00', durationMinutes: 180 },
          { weekday: 7, startTime: '23:30', durationMinutes: 60 },
        ],
      },
      fx.programId,
    );
    const cancelledOnly = await putProgram(server.url, fx.station.id, { title: 'Cancelled Show' });
    const draftOnly = await putProgram(server.url, fx.station.id, { title: 'Draft Show' });
    const outside = await putProgram(server.url, fx.station.id, { title: 'Later Show' });
    const alsoOn = await putProgram(server.url, fx.station.id, { title: 'Afternoon' });
    await putBroadcast(server.url, fx, '2026-06-11T04:00:00Z', '2026-06-11T07:00:00Z');
    await putBroadcast(server.url, { ...fx, programId: cancelledOnly }, '2026-06-11T08:00:00Z', '2026-06-11T09:00:00Z', {
      cancelled: true,
    });
    await putBroadcast(server.url, { ...fx, programId: draftOnly }, '2026-06-11T08:00:00Z', '2026-06-11T09:00:00Z', { published: false });
    await putBroadcast(server.url, { ...fx, programId: outside }, '2026-06-20T08:00:00Z', '2026-06-20T09:00:00Z');
    await putBroadcast(server.url, { ...fx, programId: alsoOn }, '2026-06-12T12:00:00Z', '2026-06-12T13:00:00Z');

    const res = await getPrograms(fx);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ contractVersion: 1, timezone: 'Europe/Berlin', fromDate: '2026-06-10', throughDate: '2026-06-16' });
    expect(res.body.programs.map((p: { title: string }) => p.title)).to.deep.equal(['Afternoon', 'Morning Show']);
    expect(res.body.programs[1]).to.deep.equal({
      id: fx.programId,
      title: 'Morning Show',
      description: 'Wake up',
      profileId: 'profile-1',
      image: null,
      presenters: [
        { id: second, title: 'Bo Cohost', image: null },
        { id: fx.presenterId, title: 'Ana Host', image: null },
      ],
      slots: [
        { weekday: 1, startTime: '06:00', durationMinutes: 180 },
        { weekday: 7, startTime: '23:30', durationMinutes: 60 },
      ],
    });
    expect(res.body.programs[0]).to.deep.include({ description: null, profileId: null, presenters: [], slots: [] });

    const later = await getPrograms(fx, '?fromDate=2026-06-20&throughDate=2026-06-20');
    expect(later.body).to.include({ fromDate: '2026-06-20', throughDate: '2026-06-20' });
    expect(later.body.programs.map((p: { id: string }) => p.id)).to.deep.equal([outside]);
  });

  it('echoes throughDate as a YYYY-MM-DD date even when fromDate + 6 days would pass 9999-12-31', async () => {
    // Contract: calendar dates are local YYYY-MM-DD strings; the default window stops at the last one.
    const fx = await scheduleFixture(server.url);
    for (const fromDate of ['9999-12-31', '9999-12-26']) {
      const res = await getPrograms(fx, `?fromDate=${fromDate}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ fromDate, throughDate: '9999-12-31' });
    }
    expect((await getPrograms(fx, '?fromDate=9999-12-25')).body.throughDate, 'no clamp needed').to.equal('9999-12-31');
    expect((await getPrograms(fx, '?fromDate=9999-12-24')).body.throughDate).to.equal('9999-12-30');
    const schedule = await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/schedule?fromDate=9999-12-31`, {
      token: fx.token,
    });
    expect(schedule.status).to.equal(200);
  });

  it('uses the programs module switch', async () => {
    const fx = await scheduleFixture(server.url);
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { modules: { programs: false } });
    const res = await getPrograms(fx);
    expect(res.status).to.equal(404);
    expect(res.body.error.code).to.equal('MODULE_DISABLED');
  });
});

describe('current broadcast GET …/broadcast/current', () => {
  const { clock, server } = useClockedServer('2026-06-10T10:00:00Z', { reset: true });

  const getCurrent = (fx: ScheduleFixture) =>
    request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/broadcast/current`, { token: fx.token });

  it('is the broadcast on air now with asOf, or null (not an error) when nothing is', async () => {
    const fx = await scheduleFixture(server.url);
    const empty = await getCurrent(fx);
    expect(empty.status).to.equal(200);
    expect(empty.body).to.deep.equal({ contractVersion: 1, timezone: 'Europe/Berlin', asOf: '2026-06-10T10:00:00.000Z', broadcast: null });

    const onAir = await putBroadcast(server.url, fx, '2026-06-10T09:00:00Z', '2026-06-10T11:00:00Z');
    await putBroadcast(server.url, fx, '2026-06-10T11:00:00Z', '2026-06-10T12:00:00Z');
    const res = await getCurrent(fx);
    expect(res.body.asOf).to.equal('2026-06-10T10:00:00.000Z');
    expect(res.body.broadcast).to.include({ id: onAir, status: 'live', localDate: '2026-06-10', title: 'Morning Show' });

    clock.set('2026-06-10T11:00:00Z'); // the end is exclusive, the start inclusive
    expect((await getCurrent(fx)).body.broadcast.id).to.not.equal(onAir);
    clock.set('2026-06-10T12:00:00Z');
    expect((await getCurrent(fx)).body.broadcast).to.equal(null);
  });

  it('ignores cancelled and unpublished broadcasts; of overlapping ones the later-starting is on air', async () => {
    const fx = await scheduleFixture(server.url);
    const long = await putBroadcast(server.url, fx, '2026-06-10T06:00:00Z', '2026-06-10T14:00:00Z');
    await putBroadcast(server.url, fx, '2026-06-10T09:30:00Z', '2026-06-10T10:30:00Z', { cancellationReason: 'Off' });
    await putBroadcast(server.url, fx, '2026-06-10T09:45:00Z', '2026-06-10T10:30:00Z', { published: false });
    expect((await getCurrent(fx)).body.broadcast.id).to.equal(long);
    const flash = await putBroadcast(server.url, fx, '2026-06-10T09:50:00Z', '2026-06-10T10:10:00Z');
    expect((await getCurrent(fx)).body.broadcast.id).to.equal(flash);
  });

  it('uses the currentBroadcast module switch and rejects unknown parameters', async () => {
    const fx = await scheduleFixture(server.url);
    const bad = await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/broadcast/current?at=now`, { token: fx.token });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.issues[0].path).to.equal('at');
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { modules: { currentBroadcast: false } });
    expect((await getCurrent(fx)).body.error.code).to.equal('MODULE_DISABLED');
  });
});
